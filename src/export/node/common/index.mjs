// scopecheck's stand-in for Node's test/common/index.mjs (the ES module face
// of test/common/index.js); never exported.
import { createRequire } from 'module';

const require = createRequire(import.meta.url);
const common = require('./index.js');

export const { buildType, mustCall, mustNotCall, nodeProcessAborted } = common;
