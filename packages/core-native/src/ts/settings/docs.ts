// The docs of the settings table: README tables (`mate options`), --help
// lines, and the native options list (options.inc). Tests keep README.md
// and options.inc equal to what these print.
import { HANDOFF_ENV, HANDOFF_VERSION } from './handoff';
import { rowsOn, SETTINGS, spell, type RunnerName, type SettingRow } from './table';

const defaultText = (r: SettingRow): string =>
  r.defaultText ?? (r.default === undefined ? 'unset' : JSON.stringify(r.default).replace(/"/g, "'"));

/** A flag as written in docs: `--guard-alloc, --no-guard-alloc` or `--guard-mode <tail|head>`. */
export function flagUsage(r: SettingRow, flag: string): string {
  return r.value.placeholder === undefined ? `${flag}, --no-${flag.slice(2)}` : `${flag} ${r.value.placeholder}`;
}

/** Where a runner's config names a setting: its column in its package README's table and in the main README's combined one (its adapter's `configColumn`). */
export interface ConfigColumn {
  /** The package README's heading: `testEnvironmentOptions`. */
  heading: string;
  /** The combined table's heading, naming the runner: Jest `testEnvironmentOptions`. */
  title: string;
  /** The cell: the setting's name in that config, as markdown. */
  name: (r: SettingRow) => string;
}

/**
 * The main README's combined settings table: the common spellings, then one
 * column per runner config (`columns`: the installed adapters' configColumn,
 * in the order given), so a new runner's package adds its own column.
 */
export function runnerSettingsMarkdown(columns: readonly ConfigColumn[]): string {
  const lines = [
    `| flag | environment (\`<RUNNER>\`: the runner's name, e.g. VITEST, NODE_TEST) | ${columns.map((c) => `${c.title} | `).join('')}default | meaning |`,
    `|---|---|${columns.map(() => '---|').join('')}---|---|`,
  ];
  for (const r of rowsOn('runner')) {
    const flag = flagUsage(r, spell.runnerFlag(r))
      .split(', ')
      .map((f) => `\`${f.replace(/\|/g, '\\|')}\``)
      .join(', ');
    lines.push(
      `| ${flag} | \`MATE_<RUNNER>_${spell.envSuffix(r)}\` | ${columns.map((c) => `${c.name(r)} | `).join('')}\`${defaultText(r)}\` | ${r.description} |`,
    );
  }
  return lines.join('\n') + '\n';
}

/** A runner package README's settings table, in that runner's spellings (`mate options --runner <name>`); `config`: the adapter's column, none for a runner with no config of its own (node:test). */
export function runnerPackageSettingsMarkdown(runner: RunnerName, config?: ConfigColumn): string {
  const lines = [
    `| flag | environment | ${config ? `${config.heading} | ` : ''}default | meaning |`,
    `|---|---|${config ? '---|' : ''}---|---|`,
  ];
  for (const r of rowsOn('runner')) {
    const flag = flagUsage(r, spell.runnerFlag(r))
      .split(', ')
      .map((f) => `\`${f.replace(/\|/g, '\\|')}\``)
      .join(', ');
    lines.push(
      `| ${flag} | \`${spell.env(runner, r)}\` | ${config ? `${config.name(r)} | ` : ''}\`${defaultText(r)}\` | ${r.description} |`,
    );
  }
  return lines.join('\n') + '\n';
}

export function allocatorOptionsMarkdown(): string {
  const lines = ['| option | default | allowed | meaning |', '|---|---|---|---|'];
  for (const r of rowsOn('api')) {
    const env = r.processEnv ? ` Environment default: \`${r.processEnv}\`.` : '';
    lines.push(`| \`${r.key}\` | \`${defaultText(r)}\` | ${r.value.allowed} | ${r.description}${env} |`);
  }
  return lines.join('\n') + '\n';
}

/** --help lines of a runner CLI's guard flags. */
export function describeRunnerFlags(runner: RunnerName): string[] {
  return rowsOn('runner').map(
    (r) =>
      `  ${flagUsage(r, spell.runnerFlag(r)).padEnd(48)} ${r.description} (env ${spell.env(runner, r)}, default ${defaultText(r)})`,
  );
}

/** --help lines of `mate guard-run`. */
export function describeGuardRunFlags(): string[] {
  return rowsOn('guardRun').map((r) => {
    const flag = spell.guardRunFlag(r);
    const usage = r.value.placeholder === undefined ? flag : `${flag} ${r.value.placeholder}`;
    return `  ${usage.padEnd(24)} ${r.description} (default ${defaultText(r)})`;
  });
}

const cxxDefault = (r: SettingRow & { native: NonNullable<SettingRow['native']> }): string => {
  const d = r.default;
  switch (r.native.ctype) {
    case 'bool':
      return String(d);
    case 'std::string':
      return d === undefined ? '""' : JSON.stringify(d);
    case 'uint32_t':
      return `${String(d)}u`;
    case 'uint64_t':
      return d === undefined ? 'kUnsetU64' : `${String(d)}ull`;
    case 'Tristate':
      return d === undefined ? 'Tristate::kUnset' : d ? 'Tristate::kOn' : 'Tristate::kOff';
    // Choices: the enum's constant for the value ('tail' -> Mode::kTail).
    case 'Mode':
    case 'CudaQuarantine':
      return `${r.native.ctype}::k${String(d).replace(/^./, (c) => c.toUpperCase())}`;
  }
};

/** packages/core-native/src/native/options/options.inc */
export function nativeOptionsInc(): string {
  const lines = [
    '// GENERATED from the settings table (packages/core-native/src/ts/settings/table.ts)',
    '// by `npm run gen:options -w @mate-guard/core`; a test keeps them equal. Do not edit.',
    '//',
    '// MATE_OPTION(type, field, js_name, default): a field of mate::Options and its',
    '// key in the object the TS layer passes to configure() and configureDevice()',
    "// (already validated) and in the handoff's settings (options/handoff_reader.h).",
  ];
  for (const r of SETTINGS as readonly SettingRow[]) {
    if (!r.native) continue;
    const n = r as SettingRow & { native: NonNullable<SettingRow['native']> };
    lines.push(`MATE_OPTION(${n.native.ctype}, ${n.native.field}, "${r.key}", ${cxxDefault(n)})`);
  }
  return lines.join('\n') + '\n';
}

const snake = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * packages/core-native/src/native/options/settings.json: every setting as
 * plain data (value kinds, choices, defaults, spellings), for the packages
 * that are not TypeScript (the Python package builds its flags, environment
 * names, config fields and docs from it).
 */
export function settingsJson(): string {
  const settings = (SETTINGS as readonly SettingRow[]).map((r) => ({
    key: r.key,
    name: r.name,
    value: r.value.spec,
    allowed: r.value.allowed,
    hint: r.value.hint,
    placeholder: r.value.placeholder ?? null,
    repeatable: r.value.repeatable ?? false,
    default: r.default ?? null,
    defaultText: defaultText(r),
    description: r.description,
    surfaces: Object.keys(r.surfaces).sort(),
    processEnv: r.processEnv ?? null,
    needsDevice: r.needsDevice ?? false,
    native: r.native ?? null,
    spellings: {
      runnerFlag: spell.runnerFlag(r),
      runnerEnvSuffix: spell.envSuffix(r),
      guardRunFlag: spell.guardRunFlag(r),
      pythonKey: snake(r.key),
      pytestFlag: spell.runnerFlag(r),
      pytestEnv: spell.env('pytest', r),
      pytestIni: `guard_${r.name.replace(/-/g, '_')}`,
    },
  }));
  const doc = {
    comment:
      'GENERATED from the settings table (packages/core-native/src/ts/settings/table.ts) by `npm run gen:options -w @mate-guard/core`; a test keeps them equal. Do not edit.',
    version: 1,
    handoffEnv: HANDOFF_ENV,
    handoffVersion: HANDOFF_VERSION,
    settings,
  };
  return JSON.stringify(doc, null, 2) + '\n';
}
