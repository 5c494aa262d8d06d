'use strict';
// Verdaccio on 127.0.0.1 (a free port), storage under argv[2], no uplinks:
// it serves what is published to it and nothing else. Prints
// "listening on <port>"; stops on SIGTERM, and when its parent goes away
// (its stdin, a pipe from the parent, closes), so a killed test leaves no
// registry behind.
const path = require('node:path');
const { runServer } = require('verdaccio');

const dir = process.argv[2];
const config = {
  self_path: dir,
  storage: path.join(dir, 'storage'),
  auth: { htpasswd: { file: path.join(dir, 'htpasswd'), max_users: 10 } },
  uplinks: {},
  packages: { '**': { access: '$all', publish: '$authenticated', unpublish: '$authenticated' } },
  log: { type: 'stdout', format: 'pretty', level: 'error' },
  web: { enable: false },
  max_body_size: '50mb',
};

runServer(config).then((app) => {
  const server = app.listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening on ${server.address().port}\n`);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
});
