/**
 * The key figures of one bench run, in the order they were added, written as JSON to the file given with
 * `--summary FILE` (nothing is written without it). bench/profiles.ts runs a bench once per profile with
 * it and prints the figures side by side.
 */
import { readFileSync, writeFileSync } from 'node:fs';

export type SummaryRows = [figure: string, value: string][];

export class BenchSummary {
  private readonly rows: SummaryRows = [];

  add(figure: string, value: string): void {
    this.rows.push([figure, value]);
  }

  /** Writes the figures to the `--summary` file when the command line names one. */
  write(): void {
    const i = process.argv.indexOf('--summary');
    if (i < 0) return;
    const file = process.argv[i + 1];
    if (!file) throw new Error('--summary needs a file name');
    writeFileSync(file, JSON.stringify(this.rows, null, 1));
  }
}

export function readSummary(file: string): SummaryRows {
  return JSON.parse(readFileSync(file, 'utf8')) as SummaryRows;
}
