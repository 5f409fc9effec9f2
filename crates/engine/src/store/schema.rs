//! The store's schema, one migration per version (`PRAGMA user_version`). Append, never edit.

pub const MIGRATIONS: &[&str] = &[
    // 1: follows, notices, cards, cancel notes, the signed-in account.
    r#"
    CREATE TABLE account (
        only INTEGER PRIMARY KEY CHECK (only = 1),
        user_id TEXT NOT NULL,
        email TEXT NOT NULL,
        team TEXT,
        signed_in_at INTEGER NOT NULL,
        -- Why the account is not working (a refused token): shown until the next sign-in.
        problem TEXT
    );
    CREATE TABLE follows (
        kind TEXT NOT NULL CHECK (kind IN ('run', 'handoff')),
        id TEXT NOT NULL,
        account TEXT NOT NULL,
        cursor INTEGER NOT NULL DEFAULT 0,
        started_at INTEGER NOT NULL,
        changed_at INTEGER NOT NULL,
        made_here INTEGER NOT NULL DEFAULT 0,
        ended_at INTEGER,
        end_reason TEXT,
        PRIMARY KEY (kind, id)
    );
    CREATE INDEX follows_active ON follows (account) WHERE ended_at IS NULL;
    CREATE TABLE notices (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        key TEXT NOT NULL UNIQUE,
        item TEXT NOT NULL,
        source TEXT NOT NULL,
        status TEXT NOT NULL,
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        urgent INTEGER NOT NULL DEFAULT 0,
        account TEXT,
        created_at INTEGER NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('untold', 'told', 'silent')),
        told_at INTEGER,
        banner_id INTEGER,
        read_at INTEGER
    );
    CREATE INDEX notices_untold ON notices (seq) WHERE state = 'untold';
    CREATE INDEX notices_item ON notices (item, seq);
    CREATE TABLE cards (
        run_id TEXT PRIMARY KEY,
        task TEXT NOT NULL,
        outcome TEXT NOT NULL,
        receipt TEXT,
        notice_key TEXT,
        ended_at INTEGER NOT NULL
    );
    CREATE TABLE cancel_notes (
        run_id TEXT PRIMARY KEY,
        noted_at INTEGER NOT NULL
    );
    "#,
    // 2: local notices (cmux's socket): their cmux id, subtitle, and the surface they came from;
    //    which terminal surface shows a cloud session (session.attach), for the click.
    r#"
    ALTER TABLE notices ADD COLUMN cmux_id TEXT;
    ALTER TABLE notices ADD COLUMN subtitle TEXT NOT NULL DEFAULT '';
    ALTER TABLE notices ADD COLUMN workspace_id TEXT;
    ALTER TABLE notices ADD COLUMN surface_id TEXT;
    CREATE UNIQUE INDEX notices_cmux_id ON notices (cmux_id) WHERE cmux_id IS NOT NULL;
    CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL,
        surface_id TEXT,
        attached_at INTEGER NOT NULL
    );
    "#,
    // 3: the delivery policy: why each notice did or did not show a banner, whether it rang,
    //    whether a summary covered it; the cloud session it is about (for focus); small durable
    //    state (the pause, the last good delivery settings).
    r#"
    ALTER TABLE notices ADD COLUMN delivery TEXT;
    ALTER TABLE notices ADD COLUMN sound INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE notices ADD COLUMN summarized INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE notices ADD COLUMN session_id TEXT;
    CREATE INDEX notices_held ON notices (seq) WHERE delivery IN ('paused', 'quiet hours') AND summarized = 0;
    CREATE TABLE kv (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    "#,
    // 4: what a follow is called (a Run's task, a hand-off's title), for the tray and the
    //    history; learnt from each snapshot. A terminal's body as it sent it, for
    //    notification.list (the banner body has the subtitle joined in and is cut).
    r#"
    ALTER TABLE follows ADD COLUMN title TEXT;
    ALTER TABLE notices ADD COLUMN local_body TEXT;
    ALTER TABLE notices ADD COLUMN host TEXT;
    "#,
    // 5: why a banner could not be shown, for a notice set aside after its tries (the history and
    //    `status` say it); the age of notices, for the retention sweep.
    r#"
    ALTER TABLE notices ADD COLUMN failure TEXT;
    CREATE INDEX notices_created ON notices (created_at);
    "#,
    // 6: the terminal a notice or a cloud session's tab is in (tmux pane, kitty window …; JSON of
    //    `terminal::Place`), for the click and the focus rule; what a click could not reach
    //    (the pane is gone), which the card it opened instead says. A session may be reported by its
    //    terminal alone, so its workspace is no longer required.
    r#"
    ALTER TABLE notices ADD COLUMN place TEXT;
    ALTER TABLE notices ADD COLUMN reveal_note TEXT;
    CREATE TABLE sessions_6 (
        session_id TEXT PRIMARY KEY,
        workspace_id TEXT,
        surface_id TEXT,
        place TEXT,
        attached_at INTEGER NOT NULL
    );
    INSERT INTO sessions_6 (session_id, workspace_id, surface_id, attached_at)
        SELECT session_id, workspace_id, surface_id, attached_at FROM sessions;
    DROP TABLE sessions;
    ALTER TABLE sessions_6 RENAME TO sessions;
    "#,
    // 7: how many banners a source showed lately (the burst rule, `shown_since`), which every
    //    decision asks: without it each one read the whole table.
    r#"
    CREATE INDEX notices_shown ON notices (source, told_at) WHERE delivery IN ('shown', 'coalesced');
    "#,
    // 8: the account's problem as its kind (JSON of `store::AccountProblem`), said in the
    //    person's language where it is shown; the English sentences stored before become their
    //    kinds (a sentence of no known kind: the token refused, which a sign-in clears alike).
    r#"
    UPDATE account SET problem = CASE
        WHEN problem LIKE 'The cloud refused CMUX_TRAY_TOKEN%' THEN json_object('kind', 'env-token-refused')
        WHEN problem LIKE 'The saved sign-in was not found in %: sign in again.'
            THEN json_object('kind', 'not-found', 'kept', substr(problem, 36, length(problem) - 35 - 16))
        WHEN problem LIKE 'The saved sign-in is for %, and the settings now name %: sign in again.' THEN json_object('kind', 'other-cloud',
            'from', substr(problem, 26, instr(problem, ', and the settings now name ') - 26),
            'here', substr(problem, instr(problem, ', and the settings now name ') + 28,
                           length(problem) - instr(problem, ', and the settings now name ') - 27 - 16))
        ELSE json_object('kind', 'token-refused')
    END WHERE problem IS NOT NULL;
    "#,
];
