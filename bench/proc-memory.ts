/**
 * A process's memory by kind, read from outside it in /proc: what a growing resident set is.
 *
 * `smaps_rollup` (one read, cheap enough every few seconds) splits the resident set into
 * anonymous memory (V8's heap, malloc's arenas, stacks) and file-backed pages (the binary,
 * shared libraries, files mapped by SQLite such as a WAL index). `smaps` (one entry a
 * mapping, dearer) says which mappings hold it: read twice, the mappings that grew.
 */
import fs from 'node:fs';

const KIB_PER_MIB = 1024;
/** glibc's non-main arenas are heaps of HEAP_MAX_SIZE (64 MiB on 64 bits), aligned to it (malloc/arena.c). */
const ARENA_HEAP_BYTES = 64 * 2 ** 20;
/** V8's heap pages (kRegularPageSize, src/common/globals.h): each one its own mapping, aligned to its size. */
const V8_PAGE_BYTES = 256 * 1024;

export interface MemoryParts {
  /** The resident set. */
  readonly rssMiB: number;
  /** Anonymous pages: V8's heap, malloc's arenas and [heap], thread stacks. */
  readonly anonymousMiB: number;
  /** Pages backed by a file (Rss - Anonymous): code, libraries, files mapped into memory. */
  readonly fileBackedMiB: number;
}

/** The resident set by kind from the text of /proc/<pid>/smaps_rollup. */
export function parseSmapsRollup(text: string): MemoryParts {
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
  const rss = kib('Rss');
  const anonymous = kib('Anonymous');
  return { rssMiB: mib(rss), anonymousMiB: mib(anonymous), fileBackedMiB: mib(rss - anonymous) };
}

export function memoryParts(pid: number): MemoryParts {
  return parseSmapsRollup(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
}

export interface MappingGroup {
  /** How many mappings the group has. */
  readonly mappings: number;
  readonly sizeMiB: number;
  readonly rssMiB: number;
  readonly anonymousMiB: number;
}

/**
 * The mappings of /proc/<pid>/smaps grouped by what they map: the file's path, or the kernel's
 * name ([heap], [stack], [anon:…]); unnamed anonymous mappings are `[anon: malloc arena]` when
 * they are the read-write start of a 64 MiB-aligned block, all of it or followed by a PROT_NONE
 * mapping (how glibc lays out an arena's heap); `[anon: V8 pages]` when read-write, aligned to 256 KiB
 * and a whole number of 256 KiB (V8's heap pages of every isolate: the main thread's and the
 * workers'); `[anon]` otherwise (glibc's mappings for large allocations, thread stacks, guards).
 */
export function summariseSmaps(text: string): Record<string, MappingGroup> {
  const entries = parseSmaps(text);
  const groups = new Map<string, { mappings: number; sizeKiB: number; rssKiB: number; anonymousKiB: number }>();
  entries.forEach((entry, index) => {
    const name = entry.name !== '' ? entry.name : anonymousKind(entry, entries[index + 1]);
    const group = groups.get(name) ?? { mappings: 0, sizeKiB: 0, rssKiB: 0, anonymousKiB: 0 };
    group.mappings++;
    group.sizeKiB += entry.sizeKiB;
    group.rssKiB += entry.rssKiB;
    group.anonymousKiB += entry.anonymousKiB;
    groups.set(name, group);
  });
  return Object.fromEntries(
    [...groups]
      .sort(([, a], [, b]) => b.rssKiB - a.rssKiB)
      .map(([name, g]) => [
        name,
        { mappings: g.mappings, sizeMiB: mib(g.sizeKiB), rssMiB: mib(g.rssKiB), anonymousMiB: mib(g.anonymousKiB) },
      ]),
  );
}

export function mappingSummary(pid: number): Record<string, MappingGroup> {
  return summariseSmaps(fs.readFileSync(`/proc/${pid}/smaps`, 'utf8'));
}

/** The groups whose resident set changed by at least `minMiB` from `before` to `after`, largest growth first. */
export function grownMappings(
  before: Record<string, MappingGroup>,
  after: Record<string, MappingGroup>,
  minMiB = 1,
): { name: string; fromMiB: number; toMiB: number; growthMiB: number; mappingsFrom: number; mappingsTo: number }[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names]
    .map((name) => {
      const fromMiB = before[name]?.rssMiB ?? 0;
      const toMiB = after[name]?.rssMiB ?? 0;
      return {
        name,
        fromMiB,
        toMiB,
        growthMiB: round(toMiB - fromMiB),
        mappingsFrom: before[name]?.mappings ?? 0,
        mappingsTo: after[name]?.mappings ?? 0,
      };
    })
    .filter((row) => Math.abs(row.growthMiB) >= minMiB)
    .sort((a, b) => b.growthMiB - a.growthMiB);
}

interface SmapsEntry {
  readonly start: number;
  readonly end: number;
  readonly perms: string;
  readonly name: string;
  readonly sizeKiB: number;
  readonly rssKiB: number;
  readonly anonymousKiB: number;
}

function parseSmaps(text: string): SmapsEntry[] {
  const entries: { start: number; end: number; perms: string; name: string; sizeKiB: number; rssKiB: number; anonymousKiB: number }[] = [];
  for (const line of text.split('\n')) {
    // A mapping's header: "start-end perms offset dev inode [name]"; its fields follow, "Name:  N kB".
    const header = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      entries.push({
        start: parseInt(header[1]!, 16),
        end: parseInt(header[2]!, 16),
        perms: header[3]!,
        name: header[4]!.trim(),
        sizeKiB: 0,
        rssKiB: 0,
        anonymousKiB: 0,
      });
      continue;
    }
    const field = /^(Size|Rss|Anonymous):\s+(\d+) kB/.exec(line);
    const entry = entries.at(-1);
    if (!field || !entry) continue;
    if (field[1] === 'Size') entry.sizeKiB = Number(field[2]);
    else if (field[1] === 'Rss') entry.rssKiB = Number(field[2]);
    else entry.anonymousKiB = Number(field[2]);
  }
  return entries;
}

function anonymousKind(entry: SmapsEntry, next: SmapsEntry | undefined): string {
  if (isArenaStart(entry, next)) return '[anon: malloc arena]';
  // V8 maps its heap a page (256 KiB, aligned to it) or a large object at a time, at random addresses.
  if (entry.perms.startsWith('rw') && entry.start % V8_PAGE_BYTES === 0 && (entry.end - entry.start) % V8_PAGE_BYTES === 0)
    return '[anon: V8 pages]';
  return '[anon]';
}

function isArenaStart(entry: SmapsEntry, next: SmapsEntry | undefined): boolean {
  return (
    entry.perms.startsWith('rw') &&
    entry.start % ARENA_HEAP_BYTES === 0 &&
    (entry.end - entry.start === ARENA_HEAP_BYTES ||
      (entry.end - entry.start < ARENA_HEAP_BYTES &&
        next !== undefined &&
        next.name === '' &&
        next.start === entry.end &&
        next.perms.startsWith('---')))
  );
}

const mib = (kib: number) => round(kib / KIB_PER_MIB);
const round = (value: number) => Number(value.toFixed(1));
