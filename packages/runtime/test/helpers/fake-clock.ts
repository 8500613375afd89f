// TODO(lead): remove once daemon tests import FakeClock from @sluice/runtime/testing
export { FakeClock } from '../../src/testing/index.js';
