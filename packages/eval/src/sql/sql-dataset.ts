import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '@rho/core';

/** BIRD's difficulty labels. */
export const SQL_DIFFICULTIES = ['simple', 'moderate', 'challenging'] as const;

/** A difficulty label of a question. */
export type SqlDifficulty = (typeof SQL_DIFFICULTIES)[number];

/** One text-to-SQL question, as in BIRD's `dev.json`. */
export interface SqlQuestion {
  /** BIRD's `question_id` (a number in BIRD; kept as given), unique in the dataset. */
  id: string;
  /** The database the question is about (`db_id`). */
  dbId: string;
  /** The question in natural language. */
  question: string;
  /** BIRD's external-knowledge hint (`evidence`); empty when there is none. */
  evidence: string;
  /** The gold query (`SQL`), never shown to the agent. */
  goldSql: string;
  /** The difficulty label; `unlabelled` when the dataset has none. */
  difficulty: SqlDifficulty | 'unlabelled';
  /** Absolute path of the SQLite file of `dbId`. */
  databasePath: string;
}

/** A loaded dataset: questions and where they came from. */
export interface SqlDataset {
  /** A short name for reports: `chinook`, or the dataset directory's name. */
  name: string;
  /** The questions file that was read. */
  path: string;
  /** The folder of the databases (`<databasesDir>/<db_id>/<db_id>.sqlite`). */
  databasesDir: string;
  /** Questions in file order. */
  questions: SqlQuestion[];
}

/** Names of the datasets bundled with this package. */
export const BUNDLED_SQL_DATASETS = ['chinook'] as const;

/** Directory of a bundled dataset, in BIRD's dev layout (`dev.json`, `dev_databases/`). */
export function bundledSqlDatasetDir(name: (typeof BUNDLED_SQL_DATASETS)[number]): string {
  // A bundle that inlines this package (the bundled rho CLI) carries the data sets next to its
  // modules; otherwise dist/sql/ (or src/sql/ under test) → the package root's datasets/.
  const beside = fileURLToPath(new URL(`./datasets/${name}`, import.meta.url));
  if (existsSync(join(beside, 'dev.json'))) return beside;
  return fileURLToPath(new URL(`../../datasets/${name}`, import.meta.url));
}

/** Options of {@link loadSqlDataset}. */
export interface LoadSqlDatasetOptions {
  /** Folder of the databases (`<dbDir>/<db_id>/<db_id>.sqlite`); default `dev_databases` next to the questions file. */
  databasesDir?: string;
}

/**
 * Loads a text-to-SQL dataset: a bundled name (`chinook`), a directory in BIRD's dev layout
 * (`dev.json` plus `dev_databases/<db_id>/<db_id>.sqlite`, as BIRD's download unpacks), or the
 * questions JSON file itself. Every question is checked and every database must exist, so a bad
 * dataset fails before any model call, with a message that names the question and the field.
 */
export function loadSqlDataset(source: string, options: LoadSqlDatasetOptions = {}): SqlDataset {
  const bundled = (BUNDLED_SQL_DATASETS as readonly string[]).includes(source);
  const target = bundled ? bundledSqlDatasetDir(source as (typeof BUNDLED_SQL_DATASETS)[number]) : resolve(source);
  if (!existsSync(target)) {
    throw new ConfigError({
      message: `Dataset not found: ${target}. Pass ${BUNDLED_SQL_DATASETS.join(' or ')}, a directory in BIRD's dev layout (dev.json and dev_databases/), or a questions JSON file.`,
    });
  }
  let file = target;
  if (statSync(target).isDirectory()) {
    file = join(target, 'dev.json');
    if (!existsSync(file))
      throw new ConfigError({
        message: `No dev.json in ${target}. A dataset directory holds dev.json (the questions) and dev_databases/<db_id>/<db_id>.sqlite, as BIRD's dev set does; or pass the questions file itself.`,
      });
  }
  const databasesDir = resolve(options.databasesDir ?? join(dirname(file), 'dev_databases'));
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError({
      message: `Cannot read the questions in ${file}: ${error instanceof Error ? error.message : String(error)}. It must be a JSON array of BIRD questions.`,
      cause: error,
    });
  }
  if (!Array.isArray(parsed))
    throw new ConfigError({
      message: `${file} must hold a JSON array of questions ({question_id, db_id, question, evidence, SQL, difficulty}).`,
    });
  const seen = new Set<string>();
  const questions = parsed.map((item: unknown, index) => {
    const question = parseQuestion(item, index, file, databasesDir);
    if (seen.has(question.id))
      throw new ConfigError({
        message: `${file}: question_id ${question.id} appears twice (item ${index}); ids must be unique so results can be resumed and compared.`,
      });
    seen.add(question.id);
    return question;
  });
  const missing = [...new Set(questions.map((question) => question.databasePath))].filter((path) => !existsSync(path));
  if (missing.length > 0) {
    throw new ConfigError({
      message: `Database file${missing.length > 1 ? 's' : ''} not found: ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ` and ${missing.length - 3} more` : ''}. Each db_id needs <databases dir>/<db_id>/<db_id>.sqlite (BIRD's dev_databases layout); pass the folder with --db-dir if it is elsewhere.`,
    });
  }
  const name = bundled ? source : basename(dirname(file)) || basename(file);
  return { name, path: file, databasesDir, questions };
}

function parseQuestion(item: unknown, index: number, file: string, databasesDir: string): SqlQuestion {
  const where = `${file}, item ${index}`;
  if (typeof item !== 'object' || item === null || Array.isArray(item))
    throw new ConfigError({
      message: `${where}: a question must be an object with question_id, db_id, question and SQL.`,
    });
  const record = item as Record<string, unknown>;
  const text = (key: string, required: boolean): string => {
    const value = record[key];
    if (value === undefined || value === null) {
      if (required) throw new ConfigError({ message: `${where}: missing '${key}'.` });
      return '';
    }
    if (typeof value !== 'string')
      throw new ConfigError({ message: `${where}: '${key}' must be a string (got ${typeof value}).` });
    if (required && value.trim() === '') throw new ConfigError({ message: `${where}: '${key}' is empty.` });
    return value;
  };
  const rawId = record.question_id ?? index;
  if (typeof rawId !== 'number' && typeof rawId !== 'string')
    throw new ConfigError({ message: `${where}: 'question_id' must be a number or a string.` });
  const dbId = text('db_id', true);
  if (!/^[\w.-]+$/.test(dbId) || dbId.startsWith('.'))
    throw new ConfigError({
      message: `${where}: db_id ${JSON.stringify(dbId)} is not a plain name (letters, digits, _ . -).`,
    });
  const difficulty = text('difficulty', false);
  if (difficulty !== '' && !(SQL_DIFFICULTIES as readonly string[]).includes(difficulty)) {
    throw new ConfigError({
      message: `${where}: difficulty ${JSON.stringify(difficulty)} is not one of ${SQL_DIFFICULTIES.join(', ')}.`,
    });
  }
  return {
    id: String(rawId),
    dbId,
    question: text('question', true),
    evidence: text('evidence', false),
    goldSql: text('SQL', true),
    difficulty: difficulty === '' ? 'unlabelled' : (difficulty as SqlDifficulty),
    databasePath: join(databasesDir, dbId, `${dbId}.sqlite`),
  };
}
