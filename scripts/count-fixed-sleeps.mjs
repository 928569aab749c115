#!/usr/bin/env node
/**
 * Sums the FIXED sleeps in the test code: waits for a literal amount of real time that do not
 * check a condition. Usage: `node scripts/count-fixed-sleeps.mjs [dir …] [--list] [--json]`
 * (default dir: test/). Parses every .ts/.mts/.js/.mjs file with the TypeScript compiler API.
 *
 * What counts as a sleep call site:
 *   - `setTimeout(r, N)` / `setTimeout(() => r(), N)` whose callback only resolves (a promise
 *     sleep). A setTimeout whose callback does something else (rejects, aborts, destroys a socket)
 *     is a timeout or a scheduled action, not a sleep, and is not counted.
 *   - a call of a function named `sleep`, `delay` or `pause` (a bare identifier, so nock's
 *     `.delay(300)` — simulated server latency — is not one).
 * What is counted (the fixed ones):
 *   - the duration must resolve to a number: a numeric literal, arithmetic on literals, or a
 *     top-level `const` of the same file initialised to one of those or to
 *     `Number(process.env.X ?? <literal>)` (the default is counted). A duration that does not
 *     resolve (a parameter, `until - Date.now()`) is reported as unresolved, not summed; a sleep
 *     helper's own `setTimeout(r, ms)` is such a case — its call sites are counted instead.
 *   - a sleep inside a counted loop `for (let i = 0; i < N; i++)` (literal N) in the same
 *     function counts N times.
 *   - a sleep inside a loop over a collection (`for … of`, `for await … of`, `for … in`) or a
 *     counted loop whose bound is not a literal is a fixed sleep per element: counted ONCE and
 *     flagged `× ?` (the number of iterations is not known statically).
 * What is excluded (polling, not a fixed sleep):
 *   - a sleep inside a loop of the same function that runs while a condition holds (`while`,
 *     `do … while`, `for (;;)`, any other `for`): it is the pause of a loop that waits on a
 *     condition.
 * Loops outside the enclosing function (test generation such as `for (const v of …) it(…)`,
 * `describe.each`) are not followed: the sum is per call site, not per executed test.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const args = process.argv.slice(2);
const list = args.includes('--list');
const asJson = args.includes('--json');
const roots = args.filter((a) => !a.startsWith('--'));
if (roots.length === 0) roots.push('test');

const SLEEP_NAMES = new Set(['sleep', 'delay', 'pause']);

function walk(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'fixtures') out.push(...walk(full));
    } else if (/\.(ts|mts|js|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

function isFunctionLike(node) {
  return ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isArrowFunction(node) || ts.isMethodDeclaration(node);
}

/** Numeric value of an expression, or undefined. `consts` maps top-level const names to initialisers. */
function evaluate(node, consts, seen = new Set()) {
  if (!node) return undefined;
  if (ts.isParenthesizedExpression(node)) return evaluate(node.expression, consts, seen);
  if (ts.isNumericLiteral(node)) return Number(node.text.replace(/_/g, ''));
  if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.MinusToken) {
    const v = evaluate(node.operand, consts, seen);
    return v === undefined ? undefined : -v;
  }
  if (ts.isBinaryExpression(node)) {
    const op = node.operatorToken.kind;
    if (op === ts.SyntaxKind.QuestionQuestionToken) return evaluate(node.right, consts, seen);
    const a = evaluate(node.left, consts, seen);
    const b = evaluate(node.right, consts, seen);
    if (a === undefined || b === undefined) return undefined;
    if (op === ts.SyntaxKind.PlusToken) return a + b;
    if (op === ts.SyntaxKind.MinusToken) return a - b;
    if (op === ts.SyntaxKind.AsteriskToken) return a * b;
    if (op === ts.SyntaxKind.SlashToken) return a / b;
    return undefined;
  }
  // Number(process.env.X ?? 10_000) → 10000
  if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'Number' && node.arguments.length === 1) {
    return evaluate(node.arguments[0], consts, seen);
  }
  if (ts.isIdentifier(node) && consts.has(node.text) && !seen.has(node.text)) {
    seen.add(node.text);
    return evaluate(consts.get(node.text), consts, seen);
  }
  return undefined;
}

function topLevelConsts(source) {
  const consts = new Map();
  for (const statement of source.statements) {
    const decl = ts.isVariableStatement(statement) ? statement.declarationList : undefined;
    if (!decl || !(decl.flags & ts.NodeFlags.Const)) continue;
    for (const d of decl.declarations) if (ts.isIdentifier(d.name) && d.initializer) consts.set(d.name.text, d.initializer);
  }
  return consts;
}

/** `() => r()` or `r`: a callback that only resolves. */
function isResolverCallback(node) {
  if (ts.isIdentifier(node)) return true;
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
    let body = node.body;
    if (ts.isBlock(body)) {
      if (body.statements.length !== 1 || !ts.isExpressionStatement(body.statements[0])) return false;
      body = body.statements[0].expression;
    }
    return ts.isCallExpression(body) && ts.isIdentifier(body.expression) && body.arguments.length === 0;
  }
  return false;
}

/** Literal iteration count of `for (let i = 0; i < N; i++)`, else undefined. */
function countedLoop(node, consts) {
  if (!ts.isForStatement(node) || !node.initializer || !node.condition || !node.incrementor) return undefined;
  const init = node.initializer;
  if (!ts.isVariableDeclarationList(init) || init.declarations.length !== 1) return undefined;
  const d = init.declarations[0];
  if (!ts.isIdentifier(d.name) || evaluate(d.initializer, consts) !== 0) return undefined;
  const c = node.condition;
  if (!ts.isBinaryExpression(c) || !ts.isIdentifier(c.left) || c.left.text !== d.name.text) return undefined;
  const bound = evaluate(c.right, consts);
  if (bound === undefined) return undefined;
  if (c.operatorToken.kind === ts.SyntaxKind.LessThanToken) return bound;
  if (c.operatorToken.kind === ts.SyntaxKind.LessThanEqualsToken) return bound + 1;
  return undefined;
}

/** The `(r) => setTimeout(r, N)` of `new Promise(…)`: transparent, the sleep belongs to the code around it. */
function isPromiseExecutor(node) {
  const parent = node.parent;
  return parent && ts.isNewExpression(parent) && ts.isIdentifier(parent.expression) && parent.expression.text === 'Promise';
}

/** `for (let i = <a>; i < <b>; i++)`: a counted loop, whatever its bounds. */
function isCountedForm(node) {
  if (!ts.isForStatement(node) || !node.initializer || !node.condition || !node.incrementor) return false;
  const init = node.initializer;
  if (!ts.isVariableDeclarationList(init) || init.declarations.length !== 1 || !ts.isIdentifier(init.declarations[0].name)) return false;
  const c = node.condition;
  return ts.isBinaryExpression(c) && ts.isIdentifier(c.left) && c.left.text === init.declarations[0].name.text &&
    (c.operatorToken.kind === ts.SyntaxKind.LessThanToken || c.operatorToken.kind === ts.SyntaxKind.LessThanEqualsToken);
}

const ISLOOP = (n) => ts.isWhileStatement(n) || ts.isDoStatement(n) || ts.isForStatement(n) || ts.isForOfStatement(n) || ts.isForInStatement(n);

const sites = [];
for (const root of roots) {
  for (const file of walk(root)) {
    const text = fs.readFileSync(file, 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS);
    const consts = topLevelConsts(source);
    const visit = (node) => {
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
        const name = node.expression.text;
        let durationNode;
        if (name === 'setTimeout' && node.arguments.length >= 2 && isResolverCallback(node.arguments[0])) durationNode = node.arguments[1];
        else if (SLEEP_NAMES.has(name) && node.arguments.length >= 1) durationNode = node.arguments[0];
        if (durationNode) {
          const ms = evaluate(durationNode, consts);
          let multiplier = 1;
          let perElement = false;
          let polling = false;
          for (let p = node.parent; p && (!isFunctionLike(p) || isPromiseExecutor(p)); p = p.parent) {
            if (!ISLOOP(p)) continue;
            if (ts.isForOfStatement(p) || ts.isForInStatement(p) || isCountedForm(p)) {
              const n = countedLoop(p, consts);
              if (n === undefined) perElement = true;
              else multiplier *= n;
              continue;
            }
            polling = true;
            break;
          }
          const { line } = source.getLineAndCharacterOfPosition(node.getStart());
          sites.push({
            file: path.relative(process.cwd(), file),
            line: line + 1,
            code: node.getText().replace(/\s+/g, ' ').slice(0, 80),
            ms,
            multiplier,
            perElement,
            kind: ms === undefined ? 'unresolved' : polling ? 'polling' : 'fixed',
          });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
}

const fixed = sites.filter((s) => s.kind === 'fixed');
const total = fixed.reduce((sum, s) => sum + s.ms * s.multiplier, 0);
const byFile = new Map();
for (const s of fixed) byFile.set(s.file, (byFile.get(s.file) ?? 0) + s.ms * s.multiplier);

if (asJson) {
  process.stdout.write(`${JSON.stringify({ totalMs: total, byFile: Object.fromEntries(byFile), sites }, null, 2)}\n`);
} else {
  if (list) {
    for (const s of sites) {
      const amount = s.ms === undefined ? '?' : `${s.ms}${s.multiplier !== 1 ? ` × ${s.multiplier}` : ''}${s.perElement ? ' × ?' : ''}`;
      process.stdout.write(`${s.kind.padEnd(10)} ${String(amount).padStart(12)} ms  ${s.file}:${s.line}  ${s.code}\n`);
    }
    process.stdout.write('\n');
  }
  for (const [file, ms] of [...byFile].sort((a, b) => b[1] - a[1])) process.stdout.write(`${String(ms).padStart(8)} ms  ${file}\n`);
  const polling = sites.filter((s) => s.kind === 'polling').length;
  const perElement = fixed.filter((s) => s.perElement).length;
  const unresolved = sites.filter((s) => s.kind === 'unresolved').length;
  process.stdout.write(`\nfixed sleeps: ${fixed.length} call sites, ${total} ms in total${perElement ? ` (${perElement} of them once per loop element, counted once)` : ''} (excluded: ${polling} polling-loop pauses, ${unresolved} with a non-literal duration)\n`);
}
