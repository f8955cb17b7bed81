// Prints the README's configuration table from src/config-schema.ts; with --write, puts it in README.md.
import fs from 'node:fs';
import path from 'node:path';
import { configurationTable, withConfigurationTable } from '../src/config-table.js';

const readmePath = path.resolve(import.meta.dirname, '..', 'README.md');
const table = configurationTable();
if (process.argv.includes('--write')) fs.writeFileSync(readmePath, withConfigurationTable(fs.readFileSync(readmePath, 'utf8'), table));
else console.log(table);
