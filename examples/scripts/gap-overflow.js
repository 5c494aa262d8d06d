'use strict';
// Planted bug: writing 2 bytes past the end of a 13-byte buffer. With the
// default 16-byte alignment that byte lands in the alignment gap before the
// guard page: no fault, but the canary there is found damaged.
const addon = require('../addon');
const buf = Buffer.from(new ArrayBuffer(13)); // an ArrayBuffer keeps the gap: Buffer.alloc(13) faults at once
addon.writeAt(buf, buf.length + 1, 0x7a);
console.log('gap write done: the canary check reports it');
