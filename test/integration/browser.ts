import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium (`make browser` installs it); CAIRN_CHROMIUM points elsewhere. */
export function chromiumPath(): string {
  if (process.env.CAIRN_CHROMIUM) return process.env.CAIRN_CHROMIUM;
  try {
    return execFileSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).trim().split('\n')[0]!;
  } catch {
    throw new Error('Chromium is not installed: run `make browser` (apt-get install chromium) or set CAIRN_CHROMIUM');
  }
}

export function launchBrowser(): Promise<Browser> {
  // --no-sandbox: tests run as root in CI containers, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/**
 * A browser on the console of the Cairn at `url`, logged in with `token`: a 1280 × 900 page that accepts
 * dialogs and collects the page's uncaught errors in `pageErrors`.
 */
export async function openConsole(url: string, token: string, pageErrors: string[]): Promise<{ browser: Browser; page: Page }> {
  const browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  page.on('dialog', (d) => void d.accept());
  page.on('pageerror', (err) => pageErrors.push(err.message));
  await page.goto(new URL('/', url).toString());
  await page.evaluate((t) => localStorage.setItem('cairn.console.token', t), token);
  return { browser, page };
}

/** The console must be built (`make console`): the server serves dist/web. */
export function assertConsoleBuilt(rootDir: string): void {
  if (!fs.existsSync(path.join(rootDir, 'dist', 'web', 'index.html'))) throw new Error('The web console is not built: run `make console` first');
}

/**
 * Saves what the page showed when a step failed, as test-results/<name>.png under `rootDir`, and
 * returns the file's path. The folder ignores itself in git (a `.gitignore` of `*`), as pytest's
 * cache does.
 */
export async function saveFailureScreenshot(page: Page, rootDir: string, name: string): Promise<string> {
  const dir = path.join(rootDir, 'test-results');
  fs.mkdirSync(dir, { recursive: true });
  const ignore = path.join(dir, '.gitignore');
  if (!fs.existsSync(ignore)) fs.writeFileSync(ignore, '*\n');
  const file = path.join(dir, `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 80)}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * Mocha hooks for a console walk whose steps build on each other: after a failure the steps left are
 * skipped (they would only wait for what never came), and what the browser showed when the step failed
 * is saved (saveFailureScreenshot) and named on stderr with the page's uncaught errors, for whoever reads
 * the failure. `page` and `rootDir` are read when a step fails (the suite's `before` sets them up).
 */
export function stopAtFirstFailure(name: string, page: () => Page | undefined, rootDir: () => string, pageErrors: string[]): void {
  let failed = false;
  beforeEach(function () {
    if (failed) this.skip();
  });
  afterEach(async function () {
    if (this.currentTest?.state !== 'failed') return;
    failed = true;
    const shown = page();
    if (!shown) return;
    await saveFailureScreenshot(shown, rootDir(), `${name} ${this.currentTest.title}`).then(
      (shot) => console.error(`    screenshot of the failure: ${shot}${pageErrors.length ? `\n    errors in the page: ${pageErrors.join('; ')}` : ''}`),
      (err: Error) => console.error(`    no screenshot of the failure: ${err.message}`),
    );
  });
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe-core on the page and returns its serious and critical violations. The source is
 * evaluated rather than added as a script tag, which the console's CSP would refuse.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

export function describeViolations(where: string, violations: AxeViolation[]): string {
  return violations.map((v) => `${where}: [${v.impact}] ${v.id}: ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).slice(0, 5).join(', ')}`).join('\n');
}
