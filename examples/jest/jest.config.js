// The example suite for Jest. In your project write
//   testEnvironment: '@mate-guard/jest-env'
// (this repository points at the package by path so it runs from a checkout).
module.exports = {
  rootDir: __dirname,
  testEnvironment: require.resolve('../../packages/jest-env'),
  testMatch: ['<rootDir>/*.test.js'],
  // Jest's default transform (babel-jest), as in most projects.
};
