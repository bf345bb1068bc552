-- The shared policy store (lazarus.policy.store: postgres): what the embedded store keeps in its
-- MVStore maps, as tables every replica reads and writes. Rows hold the same JSON documents.

-- One row per backend: its role, state, reason, draining flag and since.
CREATE TABLE policy_state (
    backend_id text PRIMARY KEY,
    state      jsonb NOT NULL
);

-- Fallback chains an operator set at run time (PUT /admin/routes/{model}).
CREATE TABLE route_override (
    model    text PRIMARY KEY,
    backends jsonb NOT NULL
);

-- The audit journal. seq is given under the store's write lock (max + 1), so it has no gaps and
-- its order is the order of commit: a replica that saw seq N has seen everything before it.
CREATE TABLE audit_event (
    seq        bigint PRIMARY KEY,
    at         timestamptz NOT NULL,
    backend_id text,
    action     text NOT NULL,
    event      jsonb NOT NULL
);

-- Named leases: one decision gate per candidate across replicas.
CREATE TABLE lease (
    name       text PRIMARY KEY,
    holder     text NOT NULL,
    expires_at timestamptz NOT NULL
);

-- Each replica's recent live figures per backend, aggregated by the readers.
CREATE TABLE live_figures (
    replica    text NOT NULL,
    backend_id text NOT NULL,
    tokens_per_second double precision,   -- null: no judged calls in the window
    ttft_p50_ms       bigint,
    ttft_p95_ms       bigint,
    error_rate        double precision NOT NULL,
    calls             bigint NOT NULL,
    at                timestamptz NOT NULL,
    PRIMARY KEY (replica, backend_id)
);
