// Loaded through NODE_OPTIONS=--require by `mate guard-run`: installs the
// allocator in every Node process the command starts, before user code,
// with the settings guard-run resolved (the handoff).
import { readHandoff } from '../settings/handoff';
import { installFromSettings } from './install';

const handoff = readHandoff();
if (handoff?.autoInstall) installFromSettings(handoff.settings);
