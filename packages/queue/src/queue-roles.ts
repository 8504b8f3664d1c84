/** Names used by {@link queueRolesSql}. */
export interface QueueRolesOptions {
  /** The queue's schema (`rho_queue` by default). */
  schema?: string;
  /** The group role of submitters (`rho_queue_submitter`). */
  submitterRole?: string;
  /** The group role of workers (`rho_queue_worker`). */
  workerRole?: string;
}

/**
 * The GRANT script of a task queue (`rho tasks roles`), as the fleet has one for its agents and
 * operators: two group roles without login, column grants and row-level security on `rho_task`.
 *
 * - **Submitters** (`rho_queue_submitter`): insert tasks (only as `queued`, never started, without
 *   a result), read tasks and their results, cancel queued or running tasks. They cannot claim a
 *   task, change what a task asks for once submitted (`spec`, `labels`, `priority`, `queue` have no
 *   UPDATE grant), nor mark a task done or rewrite a final task's result.
 * - **Workers** (`rho_queue_worker`): read tasks, claim them, heartbeat, record results, and run the
 *   queue's maintenance (lease expiry). They cannot submit tasks (no INSERT on `rho_task`) nor
 *   change what a task asks for.
 *
 * pg-boss's own tables are reached through pg-boss by both (a submit inserts jobs, a worker fetches
 * and completes them); its `create_queue` function runs as the schema's owner (SECURITY DEFINER), so
 * a submitter can add the queue of a new label set without owning the tables.
 *
 * Run it as the role that owns the schema (the one that created the queue: the first `rho submit`
 * or `rho worker` on the database), and again after an upgrade. It is idempotent.
 */
export function queueRolesSql(options: QueueRolesOptions = {}): string {
  const schema = identifier(options.schema ?? 'rho_queue');
  const submitter = identifier(options.submitterRole ?? 'rho_queue_submitter');
  const worker = identifier(options.workerRole ?? 'rho_queue_worker');
  const task = `${schema}.rho_task`;
  return `-- Roles of a rho task queue (@rho/queue). Run as the owner of the schema ${schema}, after the queue was created.
-- Then give each submitter a login role in ${submitter}, and each worker node one in ${worker}:
--   create role ci_bot login password '...' in role ${submitter};
--   create role node_a login password '...' in role ${worker};

do $$
begin
  if not exists (select from pg_roles where rolname = '${submitter}') then create role ${submitter} nologin; end if;
  if not exists (select from pg_roles where rolname = '${worker}') then create role ${worker} nologin; end if;
end
$$;

grant usage on schema ${schema} to ${submitter}, ${worker};

-- pg-boss's tables, as pg-boss 12 uses them: both read; submitters add and cancel jobs (job and
-- the tables that hold its queues: job_common, and a partition per partitioned queue); workers
-- take, heartbeat, complete and fail them (pg-boss fails or retries a job by deleting and
-- re-inserting it) and run the supervision (lease expiry, queue statistics, warnings). Every
-- pg-boss object records itself in instance.
grant select on all tables in schema ${schema} to ${submitter}, ${worker};
do $$
declare t regclass;
begin
  for t in select c.oid::regclass from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = '${schema}' and c.relkind in ('r', 'p') and c.relname <> 'rho_task'
  loop
    execute format('grant insert, update, delete on %s to ${worker}', t);
  end loop;
  for t in select '${schema}.job'::regclass
    union select i.inhrelid::regclass from pg_inherits i where i.inhparent = '${schema}.job'::regclass
  loop
    execute format('grant insert, update on %s to ${submitter}', t);
  end loop;
end
$$;
grant insert, update, delete on ${schema}.instance to ${submitter};
-- A new label set gets its own pg-boss queue (a partition of job, which only the owner may add).
do $$
declare fn regprocedure;
begin
  for fn in select p.oid::regprocedure from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = '${schema}' and p.proname = 'create_queue'
  loop
    execute format('alter function %s security definer set search_path = pg_catalog, pg_temp', fn);
    execute format('revoke execute on function %s from public', fn);
    execute format('grant execute on function %s to ${submitter}, ${worker}', fn);
  end loop;
end
$$;

-- rho_task: what a task asks for is written once, by its submitter.
revoke all on ${task} from ${submitter}, ${worker};
grant select on ${task} to ${submitter}, ${worker};
grant insert (id, queue, spec, labels, priority, state, deadline) on ${task} to ${submitter};
grant update (state, host, worker_id, session_id, finished_at, result) on ${task} to ${submitter};
grant update (state, attempt, host, worker_id, session_id, started_at, heartbeat_at, finished_at, result)
  on ${task} to ${worker};

alter table ${task} enable row level security;
drop policy if exists submitter_read on ${task};
create policy submitter_read on ${task} for select to ${submitter} using (true);
drop policy if exists submitter_insert on ${task};
create policy submitter_insert on ${task} for insert to ${submitter}
  with check (state = 'queued' and attempt = 0 and result is null and host is null and started_at is null);
-- Cancel, and the clean-up any client runs (a lost lease back to queued, a passed deadline):
-- only a task still queued or running, never to running or done.
drop policy if exists submitter_update on ${task};
create policy submitter_update on ${task} for update to ${submitter}
  using (state in ('queued', 'running'))
  with check (state in ('queued', 'cancelled', 'expired', 'failed'));
drop policy if exists worker_all on ${task};
create policy worker_all on ${task} for select to ${worker} using (true);
drop policy if exists worker_update on ${task};
create policy worker_update on ${task} for update to ${worker} using (true) with check (true);
`;
}

function identifier(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name))
    throw new TypeError(`'${name}' is not a lower-case SQL identifier; queue roles and schemas use plain names.`);
  return name;
}
