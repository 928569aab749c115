import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { expect, it } from 'vitest';
import type { CommandSource, InboundResult, InboundUnit } from '../../src/contracts/index.js';

export interface InboxUnderTest {
  readonly source: CommandSource;
  /** The inbox folder as a local path (for the SFTP variant: where the loopback sshd keeps it). */
  readonly dir: string;
}

const signal = () => new AbortController().signal;
const finished = '2024-05-01T10:00:00.000Z';
const done = (ref: string, extra: Partial<InboundResult> = {}): InboundResult => ({ ref, status: 'done', referenceNumber: `M${ref}`, loadId: `id-${ref}`, outboxId: Number(ref), finishedAt: finished, ...extra });

/** Two polls: a file without a `.done` marker is taken only once its size is stable across two listings. */
async function takeStable(source: CommandSource): Promise<InboundUnit[]> {
  await source.take(signal());
  return source.take(signal());
}

/**
 * The behaviour every file inbox must have, whatever the target (local folder, SFTP). `setup`
 * creates a fresh inbox with `pattern: ['*.csv', '*.json', '*.jsonl']`.
 */
export function inboxContract(setup: () => Promise<InboxUnderTest>): void {
  it('reads CSV and JSON request files once they are complete, ignoring temp and partial names', async () => {
    const { source, dir } = await setup();
    await writeFile(path.join(dir, 'loads-1.csv'), '\uFEFFerp_key,container\r\nK1,MSCU1\r\nK2,"MS,CU2"\r\n');
    await writeFile(path.join(dir, 'loads-2.json'), JSON.stringify([{ erp_key: 'J1', weight: 10 }]));
    await writeFile(path.join(dir, 'loads-3.jsonl'), '{"erp_key":"L1"}\n{"erp_key":"L2"}\n');
    for (const partial of ['.tmp-loads-9.csv-abc', 'loads-8.csv.part', '~loads-7.csv', 'notes.txt']) await writeFile(path.join(dir, partial), 'k\n1\n');

    expect(await source.take(signal())).toEqual([]); // first sighting: size not yet known to be stable
    const units = await source.take(signal());
    expect(units.map((u) => u.id.split('#')[0]).sort()).toEqual(['loads-1.csv', 'loads-2.json', 'loads-3.jsonl']);
    const byName = (name: string) => units.find((u) => u.id.startsWith(`${name}#`))!;
    expect(byName('loads-1.csv').requests).toEqual([
      { ref: '2', fields: { erp_key: 'K1', container: 'MSCU1' } },
      { ref: '3', fields: { erp_key: 'K2', container: 'MS,CU2' } },
    ]);
    expect(byName('loads-2.json').requests).toEqual([{ ref: '1', fields: { erp_key: 'J1', weight: 10 } }]);
    expect(byName('loads-3.jsonl').requests.map((r) => r.fields.erp_key)).toEqual(['L1', 'L2']);
    expect(byName('loads-1.csv').location).toContain('loads-1.csv');
  });

  it('takes a file with a .done marker at the first poll, and not a file that is still growing', async () => {
    const { source, dir } = await setup();
    await writeFile(path.join(dir, 'marked.csv'), 'k\n1\n');
    await writeFile(path.join(dir, 'marked.csv.done'), '');
    await writeFile(path.join(dir, 'growing.csv'), 'k\n1\n');
    expect((await source.take(signal())).map((u) => u.id.split('#')[0])).toEqual(['marked.csv']);
    await writeFile(path.join(dir, 'growing.csv'), 'k\n1\n2\n'); // grew since the last listing
    expect((await source.take(signal())).map((u) => u.id.split('#')[0])).toEqual(['marked.csv']);
    expect((await source.take(signal())).map((u) => u.id.split('#')[0]).sort()).toEqual(['growing.csv', 'marked.csv']);
  });

  it('malformed rows become requests with a problem; the other rows of the file are still read', async () => {
    const { source, dir } = await setup();
    await writeFile(path.join(dir, 'mixed.csv'), 'erp_key,container\nK1,A\nK2,"bad"x\nK3\nK4,D\n');
    await writeFile(path.join(dir, 'mixed.jsonl'), '{"erp_key":"J1"}\nnot json\n{"erp_key":"J3"}\n');
    const units = await takeStable(source);
    const csv = units.find((u) => u.id.startsWith('mixed.csv#'))!;
    expect(csv.requests.map((r) => [r.ref, r.fields.erp_key ?? null, r.problem === undefined ? null : r.problem.slice(0, 7)])).toEqual([
      ['2', 'K1', null], ['3', null, 'line 3:'], ['4', null, 'line 4:'], ['5', 'K4', null],
    ]);
    const jsonl = units.find((u) => u.id.startsWith('mixed.jsonl#'))!;
    expect(jsonl.requests.map((r) => [r.ref, r.problem === undefined])).toEqual([['1', true], ['2', false], ['3', true]]);
  });

  it('a file taken twice (crash before accepted) yields the same unit id; after accepted it is not taken again', async () => {
    const { source, dir } = await setup();
    await writeFile(path.join(dir, 'twice.csv'), 'k\n1\n');
    const [first] = await takeStable(source);
    const [again] = await source.take(signal());
    expect(again!.id).toBe(first!.id);
    expect(first!.id).toMatch(/^twice\.csv#[0-9a-f]{16}$/);
    await source.accepted(again!, signal());
    expect(await readdir(path.join(dir, 'processing'))).toEqual(['twice.csv']);
    expect(await source.take(signal())).toEqual([]);
    await source.accepted(again!, signal()); // repeated after a crash: still fine
    // A different file under the same name later is a different unit.
    await writeFile(path.join(dir, 'twice.csv'), 'k\n2\n');
    const [other] = await takeStable(source);
    expect(other!.id).not.toBe(first!.id);
  });

  it('all done: result file beside the file in processed/; any failed: failed/ with result and errors report', async () => {
    const { source, dir } = await setup();
    await writeFile(path.join(dir, 'good.csv'), 'k\n1\n2\n');
    await writeFile(path.join(dir, 'bad.csv'), 'k\n1\n2\n');
    const units = await takeStable(source);
    for (const unit of units) await source.accepted(unit, signal());
    const good = units.find((u) => u.id.startsWith('good.csv#'))!;
    const bad = units.find((u) => u.id.startsWith('bad.csv#'))!;

    await source.writeBack(good.id, [done('2'), done('3')], signal());
    expect((await readdir(path.join(dir, 'processed'))).sort()).toEqual(['good.csv', 'good.csv.result.csv']);
    const result = parse(await readFile(path.join(dir, 'processed', 'good.csv.result.csv')), { columns: true }) as Record<string, string>[];
    expect(result).toEqual([
      { ref: '2', status: 'done', reference_number: 'M2', load_id: 'id-2', error: '', outbox_id: '2', finished_at: finished },
      { ref: '3', status: 'done', reference_number: 'M3', load_id: 'id-3', error: '', outbox_id: '3', finished_at: finished },
    ]);

    const failedResults = [done('2'), { ref: '3', status: 'failed', error: 'containerNo: "X" is not a valid container number', finishedAt: finished } as InboundResult];
    await source.writeBack(bad.id, failedResults, signal());
    await source.writeBack(bad.id, failedResults, signal()); // repeated write-back is harmless
    expect((await readdir(path.join(dir, 'failed'))).sort()).toEqual(['bad.csv', 'bad.csv.errors.txt', 'bad.csv.result.csv']);
    const report = await readFile(path.join(dir, 'failed', 'bad.csv.errors.txt'), 'utf8');
    expect(report).toContain('bad.csv: 1 of 2 request(s) failed');
    expect(report).toContain('ref 3: containerNo: "X" is not a valid container number');
    expect(await readdir(path.join(dir, 'processing'))).toEqual([]);
    expect(existsSync(path.join(dir, 'bad.csv'))).toBe(false);
  });

  it('writeBack of an unknown unit fails with an error naming the file and the folders searched', async () => {
    const { source } = await setup();
    await expect(source.writeBack('nowhere.csv#0123456789abcdef', [done('2')], signal())).rejects.toThrow(/nowhere\.csv is in none of .*processing/);
  });

  it('peek (push --dry-run) reads every complete file without taking it; writeDryRun writes <file>.dry-run.result.csv beside it', async () => {
    const { source, dir } = await setup();
    await writeFile(path.join(dir, 'a.csv'), 'k\n1\n2\n');
    await writeFile(path.join(dir, 'a.csv.done'), '');
    await writeFile(path.join(dir, 'b.csv'), 'k\n3\n');
    const listing = async () => (await readdir(dir)).sort();
    const before = await listing();

    const peeked = await source.peek!(signal());
    expect(peeked.map((u) => u.id.split('#')[0]).sort()).toEqual(['a.csv', 'b.csv']);
    expect(await source.peek!(signal())).toEqual(peeked); // nothing was taken: the same again
    expect(await listing()).toEqual(before);

    const a = peeked.find((u) => u.id.startsWith('a.csv#'))!;
    const checkedAt = '2024-05-01T10:00:00.000Z';
    await source.writeDryRun!(
      a.id,
      [
        { ref: '2', status: 'ok', outcome: 'would create load', checkedAt },
        { ref: '3', status: 'failed', outcome: 'error', error: 'caller: is required', checkedAt },
      ],
      signal(),
    );
    const dry = parse(await readFile(path.join(dir, 'a.csv.dry-run.result.csv')), { columns: true }) as Record<string, string>[];
    expect(dry).toEqual([
      { ref: '2', status: 'ok', reference_number: '', load_id: '', error: '', outbox_id: '', finished_at: checkedAt, dry_run: 'true', outcome: 'would create load' },
      { ref: '3', status: 'failed', reference_number: '', load_id: '', error: 'caller: is required', outbox_id: '', finished_at: checkedAt, dry_run: 'true', outcome: 'error' },
    ]);

    // The real take: the same unit ids, the dry-run result is no request; taking the file removes it.
    const taken = await takeStable(source);
    expect(taken.map((u) => u.id).sort()).toEqual(peeked.map((u) => u.id).sort());
    await source.accepted(taken.find((u) => u.id === a.id)!, signal());
    expect(existsSync(path.join(dir, 'a.csv.dry-run.result.csv'))).toBe(false);
    // A dry-run result for a file taken meanwhile is not written (it would describe nothing).
    await source.writeDryRun!(a.id, [{ ref: '2', status: 'ok', outcome: 'would create load', checkedAt }], signal());
    expect(existsSync(path.join(dir, 'a.csv.dry-run.result.csv'))).toBe(false);
  });
}
