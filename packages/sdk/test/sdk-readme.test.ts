import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, expect, test } from 'vitest';
import { GeneratedModules, readmeBlocks } from './helpers/readme-blocks.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const generated = new GeneratedModules();
afterAll(() => generated.cleanUp());

/** The type errors of `files` by file, under the repository's test settings (strict, NodeNext, sources of @sluice/*). */
function typeErrors(files: string[]): Map<string, string[]> {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.test.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  const program = ts.createProgram(files, { ...config!.options, noEmit: true });
  const errors = new Map<string, string[]>(files.map((file) => [file, []]));
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const file = diagnostic.file?.fileName ?? '';
    const line = diagnostic.file?.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line ?? -1;
    const message = `line ${line + 1}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
    errors.set(file, [...(errors.get(file) ?? []), message]);
  }
  return errors;
}

// One program for all (loading the SDK's sources and Node's types is most of the cost): the
// README's blocks, and a wrong example that proves the check can fail.
test('every TypeScript example of the SDK README type-checks against the SDK, and a wrong one does not', () => {
  const blocks = readmeBlocks();
  expect(blocks.length).toBeGreaterThanOrEqual(6);
  const files = blocks.map((block, i) => generated.write(`typecheck-${i}`, block.source));
  const wrong = generated.write(
    'typecheck-wrong',
    "import { DaemonClient } from '@sluice/sdk';\nawait new DaemonClient({ baseUrl: 'x' }).promptt('s', { prompt: [] });",
  );
  const errors = typeErrors([...files, wrong]);
  expect(errors.get(wrong)?.join('\n')).toContain("Property 'promptt' does not exist");
  errors.delete(wrong);
  expect(Object.fromEntries([...errors].filter(([, list]) => list.length > 0))).toEqual({});
});
