'use strict';
// The planted-bug addon, built by `npm install` (cmake-js).
module.exports = require('./build/Release/buggy_addon.node');
