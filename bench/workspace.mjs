// bench/workspace: the cost of isolated workspaces and checkpoints (issue 37) on a generated
// repository of 50,000 small files (500 folders of 100; built with `git fast-import`, in a
// temporary directory). Per round, interleaved: createWorkspace + discardWorkspace (a worktree of
// the repository, checked out and removed again), and CheckpointStore.take after a turn that
// changed 3 files; against baselines measured in the same rounds: `git status` on the same
// repository and `node -e 0`. The first checkpoint (every file hashed once) is timed alone. Wall
// time is the median, CPU time (this process and its children, /proc/self/stat) the mean per
// round; the load average is printed with the figures. `--quick`: 3 rounds, 10,000 files.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore, createWorkspace, discardWorkspace } from '@rho/workspace';

const quick = process.argv.includes('--quick');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (quick ? 3 : 7));
const FOLDERS = quick ? 100 : 500;
const PER_FOLDER = 100;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** CPU ms of this process and of its children waited for (/proc/self/stat: utime, stime, cutime, cstime). */
function cpuMs() {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return ([11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0) * 1000) / 100;
}

const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('GIT_'))),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};
function git(cwd, args, input) {
  const result = spawnSync('git', args, { cwd, env, input, maxBuffer: 256 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'rho-bench-workspace-')));
const repo = join(scratch, 'repo');
const home = join(scratch, 'home');
try {
  let started = performance.now();
  git(scratch, ['init', '-q', '-b', 'main', repo]);
  const parts = [];
  const files = [];
  for (let folder = 0; folder < FOLDERS; folder += 1)
    for (let file = 0; file < PER_FOLDER; file += 1) {
      const content = `folder ${folder}, file ${file}\n`;
      parts.push(`blob\nmark :${files.length + 1}\ndata ${Buffer.byteLength(content)}\n${content}\n`);
      files.push(`d${folder}/f${file}.txt`);
    }
  parts.push('commit refs/heads/main\ncommitter Bench <bench@localhost> 1700000000 +0000\ndata 5\nfiles\n');
  files.forEach((path, index) => parts.push(`M 100644 :${index + 1} ${path}\n`));
  git(repo, ['fast-import', '--quiet'], parts.join(''));
  git(repo, ['reset', '-q', '--hard', 'main']);
  console.log(`repository of ${files.length} files made in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const session = (name) => join(home, 'sessions', name);
  const store = CheckpointStore.open({ sessionDir: session('checkpoints'), workingDir: repo });
  let cpu = cpuMs();
  started = performance.now();
  await store.take(0);
  console.log(
    `first checkpoint (every file hashed): wall ${(performance.now() - started).toFixed(0)} ms, cpu ${(cpuMs() - cpu).toFixed(0)} ms`,
  );

  let turn = 0;
  const cases = {
    'baseline: node -e 0': () => spawnSync(process.execPath, ['-e', '0']),
    'baseline: git status': () => git(repo, ['status', '--porcelain']),
    'createWorkspace + discardWorkspace': async () => {
      const id = `w${turn}`;
      const { record } = await createWorkspace({ sessionId: id, sessionDir: session(id), workingDir: repo, home });
      await discardWorkspace(record, session(id));
    },
    'take after a turn changing 3 files': async () => {
      turn += 1;
      for (const index of [turn, turn + 1000, turn + 2000])
        writeFileSync(join(repo, files[index % files.length]), `changed in turn ${turn}\n`);
      if ((await store.take(turn)) === undefined) throw new Error('no checkpoint taken');
    },
  };
  const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round += 1) {
    const names = Object.keys(cases);
    for (const name of round % 2 === 0 ? names : names.reverse()) {
      cpu = cpuMs();
      started = performance.now();
      await cases[name]();
      samples[name].push({ wall: performance.now() - started, cpu: cpuMs() - cpu });
    }
  }
  const wall = (name) => median(samples[name].map((sample) => sample.wall));
  const cpuOf = (name) => samples[name].reduce((sum, sample) => sum + sample.cpu, 0) / ROUNDS;
  const status = 'baseline: git status';
  console.log(
    `${files.length} files, ${ROUNDS} interleaved rounds; median wall, mean cpu (process and children) per round`,
  );
  for (const name of Object.keys(cases))
    console.log(
      `${name.padEnd(36)} wall ${wall(name).toFixed(1).padStart(7)} ms (x${(wall(name) / wall(status)).toFixed(2)} git status)  ` +
        `cpu ${cpuOf(name).toFixed(1).padStart(7)} ms (x${(cpuOf(name) / cpuOf(status)).toFixed(2)})`,
    );
  console.log(
    `load average ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')} (only a quiet machine, under 1, makes figures comparable)`,
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
