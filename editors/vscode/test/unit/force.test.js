'use strict';
// Force Value…, Release and the Forced Values view (src/force, issue 31) against the vscode mock
// and a fake adapter that holds forces as scanback/force, release and forced do (docs/extension.md).
const test = require('node:test');
const assert = require('node:assert/strict');
const vscode = require('./vscode-mock');
const { ForcedTreeProvider, activateForcing, forceValue, refreshForced, releaseForced } = require('../../out-test/force/forced');

const mock = vscode.__mock;
test.beforeEach(() => mock.reset());

// A live session's adapter: knows Line.startPb and %IX0.2, refuses anything else as the adapter does.
function liveAdapter() {
  const held = [];
  const known = { 'Line.startPb': 'BOOL', '%IX0.2': 'BOOL' };
  return (command, args) => {
    if (command === 'stackTrace') return { stackFrames: [{ id: 1, name: 'Line (LineControl)' }] };
    if (command === 'scanback/force') {
      if (!known[args.target]) throw new Error(`cannot force '${args.target}': no such variable`);
      const entry = { target: args.target, value: args.value, type: known[args.target], sinceCycle: 12 };
      held.push(entry);
      return { target: entry.target, value: entry.value, type: entry.type };
    }
    if (command === 'scanback/forced') return { forced: held.map((e) => ({ ...e })) };
    if (command === 'scanback/release') {
      const released = held.filter((e) => !args.target || e.target === args.target).map((e) => e.target);
      held.splice(0, held.length, ...held.filter((e) => !released.includes(e.target)));
      return { released };
    }
    return {};
  };
}

test('Force Value… from Variables names a PROGRAM variable by its instance, and the view lists the force', async () => {
  const session = mock.fakeSession({ type: 'scanback', request: 'launch' }, liveAdapter());
  mock.state.activeDebugSession = session;
  mock.state.inputBoxAnswer = 'TRUE';
  const provider = new ForcedTreeProvider();
  const forced = await forceValue(provider, { variable: { name: 'startPb', evaluateName: 'startPb', value: 'FALSE' }, container: { name: 'Instance', variablesReference: 3 } }, session);
  assert.deepEqual(forced, { target: 'Line.startPb', value: 'TRUE', type: 'BOOL' });
  assert.deepEqual(session.requests.filter((r) => r.command === 'scanback/force').map((r) => r.args), [{ target: 'Line.startPb', value: 'TRUE' }]);
  const rows = provider.getChildren().map((e) => provider.getTreeItem(e));
  assert.deepEqual(rows.map((r) => [r.label, r.description, r.contextValue]), [['Line.startPb = TRUE', 'BOOL · since cycle 12', 'forced']]);
});

test('an address typed in is forced as it is; a target the adapter refuses is an error that says why', async () => {
  const session = mock.fakeSession({ type: 'scanback', request: 'launch' }, liveAdapter());
  mock.state.activeDebugSession = session;
  const provider = new ForcedTreeProvider();
  mock.state.inputBoxAnswer = ['%IX0.2', '1'];
  assert.equal((await forceValue(provider, undefined, session)).target, '%IX0.2');
  mock.state.inputBoxAnswer = ['Line.nothing', '1'];
  assert.equal(await forceValue(provider, undefined, session), undefined);
  assert.match(mock.calls.error.at(-1), /cannot force Line\.nothing: .*no such variable/);
  assert.deepEqual(provider.current().map((e) => e.target), ['%IX0.2']);
});

test('Release releases the row it is on, Release All the rest; an adapter that cannot list lists nothing', async () => {
  const session = mock.fakeSession({ type: 'scanback', request: 'launch' }, liveAdapter());
  mock.state.activeDebugSession = session;
  const provider = new ForcedTreeProvider();
  for (const target of ['%IX0.2', 'Line.startPb']) {
    mock.state.inputBoxAnswer = [target, 'TRUE'];
    await forceValue(provider, undefined, session);
  }
  assert.equal(provider.current().length, 2);
  assert.deepEqual(await releaseForced(provider, provider.current()[0], session), ['%IX0.2']);
  assert.deepEqual(provider.current().map((e) => e.target), ['Line.startPb']);
  assert.deepEqual(await releaseForced(provider, undefined, session), ['Line.startPb']);
  assert.deepEqual(provider.current(), []);

  const replay = mock.fakeSession({ type: 'scanback', request: 'launch', trace: '/t/a.trace' }, () => {
    throw new Error('history is read-only: forces can only be set on a live or attached session');
  });
  provider.show([{ target: 'x', value: '1', type: 'INT' }]);
  await refreshForced(provider, replay);
  assert.deepEqual(provider.current(), []);
});

// An ST editor whose cursor is in `word` of `line` (what getWordRangeAtPosition needs of it).
function editorOn(line, word) {
  const at = line.indexOf(word) + 1;
  return {
    selection: { active: { character: at }, isEmpty: true },
    document: {
      languageId: 'st',
      getText: (r) => (r === undefined || r.isEmpty ? '' : line.slice(r.start, r.end)),
      getWordRangeAtPosition: (position, pattern) => {
        const re = new RegExp(pattern.source, 'g');
        for (const m of line.matchAll(re)) if (m.index <= position.character && position.character <= m.index + m[0].length) return { start: m.index, end: m.index + m[0].length };
        return undefined;
      },
    },
  };
}

test('Force Value… from the editor offers the word under the cursor, found in the frame\'s instance', async () => {
  const session = mock.fakeSession({ type: 'scanback', request: 'launch' }, liveAdapter());
  mock.state.activeDebugSession = session;
  mock.state.activeTextEditor = editorOn('IF startPb AND NOT stopPb THEN', 'startPb');
  const provider = new ForcedTreeProvider();
  // The user confirms the offered word, then gives the value.
  mock.state.inputBoxAnswer = ['startPb', 'TRUE'];
  const forced = await forceValue(provider, vscode.Uri.file('/plant/programs.st'), session);
  assert.equal(mock.calls.inputBox[0].value, 'startPb', 'the word under the cursor is offered');
  assert.deepEqual(forced, { target: 'Line.startPb', value: 'TRUE', type: 'BOOL' });
  // Another file's word is not offered: only an ST editor's.
  mock.reset();
  mock.state.activeDebugSession = session;
  mock.state.activeTextEditor = { ...editorOn('x := 1;', 'x'), document: { ...editorOn('x := 1;', 'x').document, languageId: 'json' } };
  mock.state.inputBoxAnswer = undefined;
  await forceValue(provider, undefined, session);
  assert.equal(mock.calls.inputBox[0].value, undefined);
});

test('a forced variable reads "(forced)" in Variables and offers no Set Value; the others are left as they are', () => {
  const { markForced, forcedMark } = require('../../out-test/force/forced');
  const variables = [
    { name: 'startPb', value: 'TRUE', presentationHint: { attributes: ['forced'] } },
    { name: 'stopPb', value: 'FALSE' },
    { name: 'N', value: '3', presentationHint: { attributes: ['readOnly'] } },
    { name: 'speed', value: '1.5', presentationHint: { kind: 'data', attributes: ['readOnly', 'forced'] } },
  ];
  assert.equal(markForced(variables), 2);
  assert.deepEqual(variables.map((v) => [v.value, v.presentationHint?.attributes]), [
    [`TRUE${forcedMark}`, ['forced', 'readOnly']],
    ['FALSE', undefined],
    ['3', ['readOnly']],
    [`1.5${forcedMark}`, ['readOnly', 'forced']],
  ]);
  // A response seen twice (VS Code asks again) is not marked twice.
  markForced(variables);
  assert.equal(variables[0].value, 'TRUE (forced)');
  assert.equal(markForced(undefined), 0);
});

test('in history the view lists the forces recorded at the position shown, and follows it at every stop', async () => {
  // A replay's adapter: Main.speed forced from cycle 5 and released at 12, as the trace recorded it.
  let cycle = 6;
  const replay = mock.fakeSession({ type: 'scanback', request: 'launch', trace: '/t/a.trace' }, (command) => {
    if (command !== 'scanback/forced') return {};
    const forced = cycle >= 5 && cycle < 12 ? [{ target: 'Main.speed', value: '40', type: 'INT', sinceCycle: 5 }] : [];
    return { forced, at: { cycle, step: 1 } };
  });
  mock.state.activeDebugSession = replay;
  const provider = new ForcedTreeProvider();
  await refreshForced(provider, replay);
  const rows = provider.getChildren().map((e) => provider.getTreeItem(e));
  assert.deepEqual(rows.map((r) => [r.label, r.description]), [['Main.speed = 40', 'INT · since cycle 5 · held at cycle 6']]);
  assert.match(rows[0].tooltip, /was held at 40 in cycle 6/);
  cycle = 13;
  await refreshForced(provider, replay);
  assert.deepEqual(provider.current(), []);
  // A live task's forces carry no position, and say they are held until released.
  const live = mock.fakeSession({ type: 'scanback', request: 'launch' }, liveAdapter());
  mock.state.inputBoxAnswer = ['%IX0.2', 'TRUE'];
  await forceValue(provider, undefined, live);
  assert.equal(provider.current()[0].at, undefined);
  assert.match(provider.getTreeItem(provider.current()[0]).tooltip, /until released/);
});

test('the view refreshes when the focused stack item changes (every stop) and when the session changes', async () => {
  let asked = 0;
  const session = mock.fakeSession({ type: 'scanback', request: 'launch', trace: '/t/a.trace' }, (command) => {
    if (command === 'scanback/forced') ++asked;
    return { forced: [], at: { cycle: 0, step: 0 } };
  });
  mock.state.activeDebugSession = session;
  activateForcing({ subscriptions: [] });
  const before = asked;
  mock.events.didChangeActiveStackItem.fire({});
  for (let turns = 0; asked === before && turns < 100; ++turns) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(asked, before + 1);
  mock.events.didChangeActiveSession.fire(session);
  for (let turns = 0; asked === before + 1 && turns < 100; ++turns) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(asked, before + 2);
});
