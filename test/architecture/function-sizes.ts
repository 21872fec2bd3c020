/**
 * Function sizes measured from the TypeScript syntax tree: a function's own lines are the lines
 * of its span minus the spans of the functions nested in it (a factory's closures are theirs).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

/** One function's size. */
export interface FunctionSize {
  file: string;
  name: string;
  line: number;
  /** Lines from its first to its last line. */
  total: number;
  /** Lines not inside a nested function. */
  own: number;
}

const isFunctionLike = (node: ts.Node): node is ts.FunctionLikeDeclaration =>
  ts.isFunctionDeclaration(node) ||
  ts.isFunctionExpression(node) ||
  ts.isArrowFunction(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isConstructorDeclaration(node) ||
  ts.isGetAccessorDeclaration(node) ||
  ts.isSetAccessorDeclaration(node);

function nameOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (node.name) return node.name.getText(source);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText(source);
  return "(anonymous)";
}

/** Every function of one file with its total and own line counts. */
export function functionSizes(file: string, text: string): FunctionSize[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
  const sizes: FunctionSize[] = [];
  const visit = (node: ts.Node, into: Set<number>[]): void => {
    if (isFunctionLike(node) && node.body) {
      const first = lineOf(node.getStart(source));
      const last = lineOf(node.getEnd());
      const lines = new Set<number>();
      for (let l = first; l <= last; l++) lines.add(l);
      // The lines of this function are not its parents' own lines.
      for (const parent of into) for (let l = first + 1; l < last; l++) parent.delete(l);
      const size: FunctionSize = { file, name: nameOf(node, source), line: first + 1, total: last - first + 1, own: 0 };
      ts.forEachChild(node, (child) => visit(child, [lines]));
      size.own = lines.size;
      sizes.push(size);
      return;
    }
    ts.forEachChild(node, (child) => visit(child, into));
  };
  visit(source, []);
  return sizes;
}

/** Every `.ts` file below `dir`. */
export function typescriptFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return typescriptFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

/** The sizes of every function below `dir`, with paths relative to `root`. */
export function treeFunctionSizes(dir: string, root: string): FunctionSize[] {
  return typescriptFiles(dir).flatMap((path) => functionSizes(relative(root, path), readFileSync(path, "utf8")));
}
