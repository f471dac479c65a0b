/**
 * The soak's reading of a process's memory by kind: smaps_rollup's split into anonymous and
 * file-backed pages, and smaps grouped by what each mapping maps, with glibc's arena heaps and
 * V8's heap pages told apart from other anonymous memory. On a fixture laid out as glibc and the kernel lay it
 * out, and on a real child process that allocates.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import readline from 'node:readline';
import { describe, it } from 'node:test';
import { grownMappings, memoryParts, parseSmapsRollup, summariseSmaps } from '../../bench/proc-memory';

const entry = (range: string, perms: string, name: string, sizeKiB: number, rssKiB: number, anonymousKiB: number) =>
  `${range} ${perms} 00000000 00:00 0${name === '' ? '' : `    ${name}`}\n` +
  `Size:           ${sizeKiB} kB\nKernelPageSize:        4 kB\nRss:            ${rssKiB} kB\nPss:            ${rssKiB} kB\n` +
  `Anonymous:      ${anonymousKiB} kB\nVmFlags: rd wr mr mw me ac\n`;

// An arena's heap: 64 MiB aligned at 0x7f0000000000 (a multiple of 64 MiB), 8 MiB of it read-write, the rest PROT_NONE;
// then a V8 page (256 KiB, aligned), a thread's stack with its guard, an arena's whole heap, three V8 pages in one mapping,
// the binary, and [heap].
const SMAPS =
  entry('7f0000000000-7f0000800000', 'rw-p', '', 8192, 6000, 6000) +
  entry('7f0000800000-7f0004000000', '---p', '', 57344, 0, 0) +
  entry('7f0004100000-7f0004140000', 'rw-p', '', 256, 256, 256) +
  entry('7f0004200000-7f0004201000', '---p', '', 4, 0, 0) +
  entry('7f0004201000-7f0004a01000', 'rw-p', '', 8192, 40, 40) +
  entry('7f0008000000-7f000c000000', 'rw-p', '', 65536, 65536, 65536) +
  entry('3f0190c40000-3f0190d00000', 'rw-p', '', 768, 768, 768) +
  entry('55d000000000-55d000400000', 'r-xp', '/usr/bin/node', 4096, 3000, 0) +
  entry('55d000400000-55d000410000', 'rw-p', '/usr/bin/node', 64, 64, 64) +
  entry('55d001000000-55d001100000', 'rw-p', '[heap]', 1024, 1024, 1024);

describe('bench/proc-memory', () => {
  it('splits the resident set into anonymous and file-backed pages', () => {
    const parts = parseSmapsRollup(
      '55d000000000-7ffc00000000 ---p 00000000 00:00 0    [rollup]\nRss:  307200 kB\nPss:  300000 kB\nAnonymous:  245760 kB\n',
    );
    assert.deepEqual(parts, { rssMiB: 300, anonymousMiB: 240, fileBackedMiB: 60 });
  });

  it("groups mappings by what they map, telling glibc's arena heaps and V8's pages from other anonymous memory", () => {
    const groups = summariseSmaps(SMAPS);
    assert.deepEqual(groups['[anon: malloc arena]'], { mappings: 2, sizeMiB: 72, rssMiB: 69.9, anonymousMiB: 69.9 });
    assert.deepEqual(groups['[anon: V8 pages]'], { mappings: 2, sizeMiB: 1, rssMiB: 1, anonymousMiB: 1 });
    assert.deepEqual(groups['[anon]'], { mappings: 3, sizeMiB: 64, rssMiB: 0, anonymousMiB: 0 });
    assert.deepEqual(groups['/usr/bin/node'], { mappings: 2, sizeMiB: 4.1, rssMiB: 3, anonymousMiB: 0.1 });
    assert.deepEqual(groups['[heap]'], { mappings: 1, sizeMiB: 1, rssMiB: 1, anonymousMiB: 1 });
    assert.deepEqual(Object.keys(groups)[0], '[anon: malloc arena]', 'the largest resident group first');
  });

  it('lists the groups that grew, largest growth first, and those that shrank', () => {
    const before = summariseSmaps(SMAPS);
    const after = summariseSmaps(
      SMAPS.replace('Rss:            1024 kB', 'Rss:            9216 kB').replace('Rss:            3000 kB', 'Rss:            1000 kB'),
    );
    assert.deepEqual(
      grownMappings(before, after).map((row) => [row.name, row.growthMiB]),
      [
        ['[heap]', 8],
        ['/usr/bin/node', -2],
      ],
    );
  });

  it("reads a live process's anonymous memory growing as it allocates", async () => {
    const child = spawn(
      process.execPath,
      [
        '-e',
        "process.stdout.write('ready\\n'); process.stdin.once('data', () => { globalThis.held = Buffer.alloc(96 * 2 ** 20, 1); process.stdout.write('allocated\\n'); }); process.stdin.resume();",
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    try {
      const lines = readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
      assert.equal((await lines.next()).value, 'ready');
      const before = memoryParts(child.pid!);
      child.stdin!.write('go\n');
      assert.equal((await lines.next()).value, 'allocated');
      const after = memoryParts(child.pid!);
      assert.ok(after.anonymousMiB - before.anonymousMiB >= 90, `anonymous ${before.anonymousMiB} -> ${after.anonymousMiB} MiB`);
      assert.ok(
        Math.abs(after.fileBackedMiB - before.fileBackedMiB) < 10,
        `file-backed ${before.fileBackedMiB} -> ${after.fileBackedMiB} MiB`,
      );
      assert.ok(before.fileBackedMiB > 5, 'the binary itself is file-backed');
    } finally {
      child.kill();
      await once(child, 'exit');
    }
  });
});
