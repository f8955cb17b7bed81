import { SETTINGS, type Setting } from './config-schema.js';

/**
 * The README's configuration table, generated from SETTINGS (scripts/config-table.ts writes it; a test
 * checks the README holds it). Settings next to each other with the same default and meaning share a row.
 */
export function configurationTable(settings: readonly Setting[] = SETTINGS): string {
  const rows: { names: string[]; setting: Setting }[] = [];
  for (const setting of settings) {
    const last = rows.at(-1);
    if (last && last.setting.default === setting.default && last.setting.meaning === setting.meaning) last.names.push(setting.name);
    else rows.push({ names: [setting.name], setting });
  }
  const lines = ['| variable | default | meaning |', '|---|---|---|'];
  for (const { names, setting } of rows) lines.push(`| ${names.map((n) => `\`${n}\``).join(', ')} | ${setting.default} | ${setting.meaning} |`);
  return lines.join('\n');
}

/** The README with its configuration table replaced by `table`. */
export function withConfigurationTable(readme: string, table: string): string {
  const section = readme.indexOf('\n## Configuration\n');
  const start = readme.indexOf('\n| variable | default | meaning |\n', section);
  if (section < 0 || start < 0) throw new Error('README.md has no "## Configuration" table');
  let end = start + 1;
  while (end < readme.length && readme.startsWith('|', end)) end = readme.indexOf('\n', end) + 1;
  return `${readme.slice(0, start + 1)}${table}\n${readme.slice(end)}`;
}
