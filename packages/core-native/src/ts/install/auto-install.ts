// Loaded through NODE_OPTIONS=--require by `mate guard-run`: installs the
// allocator in every Node process the command starts, before user code,
// with the settings guard-run resolved (the handoff).
import { orExitOnConfigError } from '../errors';
import { readHandoff } from '../settings/handoff';
import { installFromSettings } from './install';

const handoff = readHandoff();
// A machine with no usable binary: one line, not a preload's stack.
if (handoff?.autoInstall) orExitOnConfigError('mate-guard', () => installFromSettings(handoff.settings));
