import { WORD, has, type CharSet } from './charset.js';
import { RegexSyntaxError, parseRegex, type RegexNode } from './parse.js';
import { catastrophicReason } from './safety.js';

/**
 * Flow regexes run on this matcher, not on JavaScript's backtracking engine: the pattern compiles
 * to a small NFA program that is simulated breadth-first (a Pike VM without captures), so a match
 * costs at most input length x program size steps whatever the pattern and the input.
 */
type Instr =
  | { op: 'char'; set: CharSet }
  | { op: 'split'; a: number; b: number }
  | { op: 'jmp'; to: number }
  | { op: 'assert'; what: 'start' | 'end' | 'word' | 'notWord' }
  | { op: 'match' };

export class RegexRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RegexRefused';
  }
}

class Compiler {
  readonly prog: Instr[] = [];

  constructor(private readonly limit: number) {}

  private emit(i: Instr): number {
    if (this.prog.length >= this.limit) throw new RegexRefused(`pattern is too large once repetitions are expanded (limit ${this.limit} steps)`);
    this.prog.push(i);
    return this.prog.length - 1;
  }

  compile(node: RegexNode): void {
    switch (node.kind) {
      case 'empty':
        return;
      case 'char':
        this.emit({ op: 'char', set: node.set });
        return;
      case 'assert':
        this.emit({ op: 'assert', what: node.what });
        return;
      case 'seq':
        for (const item of node.items) this.compile(item);
        return;
      case 'alt': {
        const jumps: number[] = [];
        node.alts.forEach((alt, i) => {
          if (i < node.alts.length - 1) {
            const split = this.emit({ op: 'split', a: 0, b: 0 });
            (this.prog[split] as { a: number }).a = this.prog.length;
            this.compile(alt);
            jumps.push(this.emit({ op: 'jmp', to: 0 }));
            (this.prog[split] as { b: number }).b = this.prog.length;
          } else {
            this.compile(alt);
          }
        });
        for (const j of jumps) (this.prog[j] as { to: number }).to = this.prog.length;
        return;
      }
      case 'repeat': {
        for (let i = 0; i < node.min; i++) this.compile(node.body);
        if (node.max === Infinity) {
          const split = this.emit({ op: 'split', a: 0, b: 0 });
          (this.prog[split] as { a: number }).a = this.prog.length;
          this.compile(node.body);
          this.emit({ op: 'jmp', to: split });
          (this.prog[split] as { b: number }).b = this.prog.length;
          return;
        }
        const splits: number[] = [];
        for (let i = node.min; i < node.max; i++) {
          const split = this.emit({ op: 'split', a: 0, b: 0 });
          (this.prog[split] as { a: number }).a = this.prog.length;
          splits.push(split);
          this.compile(node.body);
        }
        for (const s of splits) (this.prog[s] as { b: number }).b = this.prog.length;
        return;
      }
    }
  }
}

function isWord(text: string, i: number): boolean {
  return i >= 0 && i < text.length && has(WORD, text.charCodeAt(i));
}

/** A compiled flow regex: `test` answers "does it match anywhere" in linear time. */
export class SafeRegex {
  private constructor(
    readonly source: string,
    private readonly prog: readonly Instr[],
  ) {}

  /**
   * Parses, checks and compiles `source`; throws RegexRefused with a reason when the pattern is
   * not valid JavaScript, uses an unsupported feature, could backtrack catastrophically in a
   * backtracking engine, or is too large.
   */
  static compile(source: string, limits: { repeat: number; program: number }): SafeRegex {
    try {
      new RegExp(source, 'i');
    } catch (err) {
      throw new RegexRefused(`does not compile: ${err instanceof Error ? err.message : String(err)}`);
    }
    let ast: RegexNode;
    try {
      ast = parseRegex(source, limits.repeat);
    } catch (err) {
      if (err instanceof RegexSyntaxError) throw new RegexRefused(`unsupported: ${err.message}`);
      throw err;
    }
    const reason = catastrophicReason(ast);
    if (reason) throw new RegexRefused(reason);
    const compiler = new Compiler(limits.program);
    compiler.compile(ast);
    compiler.prog.push({ op: 'match' });
    return new SafeRegex(source, compiler.prog);
  }

  get size(): number {
    return this.prog.length;
  }

  test(text: string): boolean {
    const prog = this.prog;
    const n = prog.length;
    // Two thread lists as dense arrays; `mark` de-duplicates states within one step.
    let current = new Int32Array(n);
    let next = new Int32Array(n);
    let currentLen = 0;
    let nextLen = 0;
    const mark = new Int32Array(n).fill(-1);
    // Each state is expanded once per step and pushes at most two others.
    const stack = new Int32Array(2 * n + 2);
    let generation = 0;

    // Follows jumps, splits and assertions from `pc` at position `i`; adds the char/match states.
    const add = (list: Int32Array, len: number, start: number, i: number): { len: number; matched: boolean } => {
      let sp = 0;
      let matched = false;
      stack[sp++] = start;
      while (sp > 0) {
        const pc = stack[--sp]!;
        if (mark[pc] === generation) continue;
        mark[pc] = generation;
        const ins = prog[pc]!;
        switch (ins.op) {
          case 'jmp':
            stack[sp++] = ins.to;
            break;
          case 'split':
            stack[sp++] = ins.b;
            stack[sp++] = ins.a;
            break;
          case 'assert': {
            let ok: boolean;
            if (ins.what === 'start') ok = i === 0;
            else if (ins.what === 'end') ok = i === text.length;
            else {
              const boundary = isWord(text, i - 1) !== isWord(text, i);
              ok = ins.what === 'word' ? boundary : !boundary;
            }
            if (ok) stack[sp++] = pc + 1;
            break;
          }
          case 'match':
            matched = true;
            break;
          case 'char':
            list[len++] = pc;
            break;
        }
      }
      return { len, matched };
    };

    for (let i = 0; i <= text.length; i++) {
      // A new thread starts at every position: the search is unanchored.
      const started = add(current, currentLen, 0, i);
      currentLen = started.len;
      if (started.matched) return true;
      if (i === text.length) break;
      generation++;
      nextLen = 0;
      const unit = text.charCodeAt(i);
      for (let k = 0; k < currentLen; k++) {
        const pc = current[k]!;
        const ins = prog[pc] as { op: 'char'; set: CharSet };
        if (has(ins.set, unit)) {
          const r = add(next, nextLen, pc + 1, i + 1);
          nextLen = r.len;
          if (r.matched) return true;
        }
      }
      [current, next] = [next, current];
      currentLen = nextLen;
    }
    return false;
  }
}
