/** One record of a CSV text as the scanner delimits it, before its fields are parsed. */
export interface RawRecord {
  /** Line (1-based) on which the record starts. */
  readonly line: number;
  readonly text: string;
  /** Why the record cannot be read; set when its quoting is malformed or it is too long. */
  readonly problem?: string;
}

/**
 * Splits CSV text into records, RFC 4180 style (a record ends at LF or CRLF outside quotes; a
 * quote opens only at the start of a field; `""` inside quotes is a quote). Malformed quoting
 * makes only its own record a problem: the scanner resumes at the next physical line, so one
 * bad row never swallows the rows behind it. Blank lines are skipped.
 */
export function scanCsvRecords(text: string, delimiter: string, maxRecordLength: number): RawRecord[] {
  const records: RawRecord[] = [];
  const n = text.length;
  let i = 0;
  let line = 1;
  const nextLineStart = (from: number) => {
    const lf = text.indexOf('\n', from);
    return lf === -1 ? n : lf + 1;
  };
  const countLines = (from: number, to: number) => {
    let count = 0;
    for (let k = text.indexOf('\n', from); k !== -1 && k < to; k = text.indexOf('\n', k + 1)) count += 1;
    return count;
  };

  while (i < n) {
    const start = i;
    const startLine = line;
    let problem: string | undefined;
    let end = -1; // end of the record's text (exclusive), before the line break
    let next = -1; // where the next record starts
    let fieldStart = true;
    while (end === -1) {
      if (i >= n) {
        end = n;
        next = n;
        break;
      }
      const c = text[i];
      if (fieldStart && c === '"') {
        let j = i + 1;
        let closed = false;
        while (j < n) {
          const q = text.indexOf('"', j);
          if (q === -1) break;
          if (text[q + 1] === '"') {
            j = q + 2;
            continue;
          }
          j = q + 1;
          closed = true;
          break;
        }
        if (!closed) {
          problem = `quote opened at line ${startLine} is never closed`;
          next = nextLineStart(start);
          end = next;
          break;
        }
        i = j;
        fieldStart = false;
        const after = text[i];
        if (i < n && !text.startsWith(delimiter, i) && after !== '\n' && !(after === '\r' && text[i + 1] === '\n')) {
          problem = `unexpected character ${JSON.stringify(after)} after the closing quote of a field (line ${startLine + countLines(start, i)})`;
          next = nextLineStart(i);
          end = next;
        }
        continue;
      }
      if (text.startsWith(delimiter, i)) {
        i += delimiter.length;
        fieldStart = true;
        continue;
      }
      if (c === '\n') {
        end = i > start && text[i - 1] === '\r' ? i - 1 : i;
        next = i + 1;
        break;
      }
      if (c === '"') {
        problem = `quote inside an unquoted field (line ${startLine + countLines(start, i)}); quote the whole field and double the quote`;
        next = nextLineStart(i);
        end = next;
        break;
      }
      fieldStart = false;
      i += 1;
    }
    line += countLines(start, next);
    i = next;
    const raw = text.slice(start, end);
    if (problem === undefined && raw.trim() === '') continue;
    if (problem === undefined && raw.length > maxRecordLength) {
      records.push({ line: startLine, text: '', problem: `record is ${raw.length} characters long, more than the limit of ${maxRecordLength}` });
      continue;
    }
    records.push(problem === undefined ? { line: startLine, text: raw } : { line: startLine, text: '', problem });
  }
  return records;
}
