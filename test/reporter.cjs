// Mocha's spec reporter, plus the counts written to $CAIRN_TEST_COUNTS for scripts/test.sh's closing lines:
// the number of tests passed, failed and pending, and each failure's file, title and first line of error, so the
// end of the output names what failed even when only its tail is kept.
const fs = require('node:fs');
const path = require('node:path');
const Mocha = require('mocha');

class CountingReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const failed = [];
    runner.on('fail', (test, err) => {
      const message = String((err && err.message) || err).split('\n').find((line) => line.trim()) || '';
      failed.push({ file: test.file ? path.relative(process.cwd(), test.file) : '', title: test.fullTitle(), message: message.slice(0, 300) });
    });
    runner.once('end', () => {
      const { passes, failures, pending } = runner.stats;
      if (process.env.CAIRN_TEST_COUNTS) fs.writeFileSync(process.env.CAIRN_TEST_COUNTS, JSON.stringify({ passes, failures, pending, failed }));
    });
  }
}

module.exports = CountingReporter;
