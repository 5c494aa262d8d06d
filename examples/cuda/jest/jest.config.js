// The CUDA example suite for Jest: `mate-jest --guard-device cuda -c
// examples/cuda/jest/jest.config.js <file>`. In your project write
//   testEnvironment: '@mate-guard/jest-env'
// (this repository points at the package by path so it runs from a checkout).
// Run each planted bug on its own: a GPU fault leaves the CUDA context
// unusable for the rest of the process, and Jest may run files in one.
module.exports = {
  rootDir: __dirname,
  testEnvironment: require.resolve('../../../packages/jest-env'),
  testMatch: ['<rootDir>/*.test.js'],
};
