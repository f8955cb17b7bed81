// Mocha's spec reporter, plus the counts written to $CAIRN_TEST_COUNTS for scripts/test.sh's closing line.
const fs = require('node:fs');
const Mocha = require('mocha');

class CountingReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once('end', () => {
      const { passes, failures, pending } = runner.stats;
      if (process.env.CAIRN_TEST_COUNTS) fs.writeFileSync(process.env.CAIRN_TEST_COUNTS, JSON.stringify({ passes, failures, pending }));
    });
  }
}

module.exports = CountingReporter;
