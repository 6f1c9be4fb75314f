// Builds the extension (Node, CommonJS, `vscode` provided by the host) and the Scan Timeline
// webview script (browser). `--tests` also transpiles every module on its own into out-test/, so
// the unit tests can load them against a mock of `vscode`.
import * as esbuild from 'esbuild';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const production = process.argv.includes('--production');
const common = { bundle: true, sourcemap: !production, minify: production, logLevel: 'warning', target: 'es2022' };

await esbuild.build({
  ...common,
  entryPoints: ['src/extension.ts'],
  outfile: 'dist/extension.js',
  platform: 'node',
  format: 'cjs',
  external: ['vscode'],
});
await esbuild.build({
  ...common,
  entryPoints: ['src/timeline/view/main.ts'],
  outfile: 'dist/timeline-view.js',
  platform: 'browser',
  format: 'iife',
});

if (process.argv.includes('--tests')) {
  const sources = (dir) =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
    );
  await esbuild.build({
    entryPoints: sources('src'),
    outdir: 'out-test',
    outbase: 'src',
    bundle: false,
    platform: 'node',
    format: 'cjs',
    target: 'es2022',
    logLevel: 'warning',
  });
}
