BEGIN TRANSACTION;
CREATE TABLE checks (
    grade_id INTEGER NOT NULL REFERENCES grades(grade_id),
    idx INTEGER NOT NULL,
    name TEXT NOT NULL,
    weight REAL NOT NULL,
    gate INTEGER NOT NULL,
    passed INTEGER NOT NULL,
    points REAL NOT NULL,
    message TEXT NOT NULL,
    evidence_json TEXT NOT NULL,
    PRIMARY KEY (grade_id, idx)
);
INSERT INTO "checks" VALUES(2,0,'inputs untampered',0.0,1,1,0.0,'inputs unchanged','{}');
INSERT INTO "checks" VALUES(2,1,'result.json parses as a JSON object',0.0,1,1,0.0,'result.json parses','{}');
INSERT INTO "checks" VALUES(2,2,'total',2.0,0,1,2.0,'within 1e-06','{"expected": 6.75, "seen": 6.75}');
INSERT INTO "checks" VALUES(2,3,'count',1.0,0,1,1.0,'equal','{"expected": 3, "seen": 3}');
CREATE TABLE grades (
    grade_id INTEGER PRIMARY KEY AUTOINCREMENT,
    trial_id TEXT NOT NULL REFERENCES trials(trial_id),
    grader_version TEXT NOT NULL,
    ok INTEGER NOT NULL,
    score REAL,
    full_pass INTEGER NOT NULL,
    error TEXT,
    created_at TEXT NOT NULL,
    duration_s REAL NOT NULL,
    gates_failed INTEGER NOT NULL,
    checks_total INTEGER NOT NULL,
    checks_passed INTEGER NOT NULL
);
INSERT INTO "grades" VALUES(1,'column-total__oracle__none__1','552d72be53457fa26e3146aa10ca74fd5fe0702c2a1338f9bf67962b85643a8e',0,NULL,0,'Traceback (most recent call last):
  File "/opt/lastexam/lib/lastexam/grading/harness.py", line 60, in main
    result = {"status": "ok", "rubric": run_grader(ctx).to_dict()}
                                        ^^^^^^^^^^^^^^^
  File "/opt/lastexam/lib/lastexam/grading/harness.py", line 35, in run_grader
    rubric = grade(ctx)
             ^^^^^^^^^^
  File "/grade/task/grader.py", line 2, in grade
    raise ValueError(''grader is broken'')
ValueError: grader is broken
','2026-12-03T07:51:03.878+00:00',8.96098430000620282953e-02,0,0,0);
INSERT INTO "grades" VALUES(2,'column-total__oracle__none__1','341dc091a3246c0c2fa86132a1021cc8e4ac63fb3331c174d323f0c7d4bd9965',1,1.0,1,NULL,'2026-12-03T07:51:04.732+00:00',9.22450100000560269108e-02,0,2,2);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO "meta" VALUES('schema_version','2');
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    config_json TEXT NOT NULL,
    harness_version TEXT NOT NULL,
    git_commit TEXT
);
INSERT INTO "runs" VALUES('20261203-075103-oracle-1a74','2026-12-03T07:51:03.637+00:00','{"task_paths":["/tmp/i10t/v2/column-total"],"agent":"oracle","model":"","agent_args":{},"attempts":1,"concurrency":1,"timeout_s":null,"sandbox":"bwrap","max_cost_usd":null,"max_tokens":null,"max_retries":2,"cells":[],"experiment":null}','0.1.0','7c8f67a9ce6238acd846c563ae0715a3e1add2d6');
CREATE TABLE trials (
    trial_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    task_id TEXT NOT NULL,
    agent TEXT NOT NULL,
    model TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    cluster TEXT NOT NULL,
    subdomain TEXT NOT NULL,
    tier TEXT NOT NULL,
    status TEXT NOT NULL,
    score REAL,
    full_pass INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    -- Copies of record fields that metrics read, so summaries need no JSON parsing.
    ended_by TEXT NOT NULL,
    agent_s REAL NOT NULL,
    cost_usd REAL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cache_read_tokens INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    model_calls INTEGER NOT NULL,
    missing_outputs INTEGER NOT NULL,
    used_software INTEGER,
    script_share REAL,
    counts INTEGER NOT NULL,  -- the error policy: does the score count toward the metrics
    grade_id INTEGER,  -- the current (newest) grade
    record_json TEXT NOT NULL,
    UNIQUE (task_id, agent, model, attempt)
);
INSERT INTO "trials" VALUES('column-total__oracle__none__1','20261203-075103-oracle-1a74','column-total','oracle','',1,'other','sports','near-term','completed',1.0,1,'2026-12-03T07:51:03.719+00:00','2026-12-03T07:51:03.880+00:00','exit',0.0564,NULL,0,0,0,0,0,0,1,0.5,1,2,'{"trial_id": "column-total__oracle__none__1", "run_id": "20261203-075103-oracle-1a74", "key": {"task_id": "column-total", "agent": "oracle", "model": "", "attempt": 1}, "task_path": "/tmp/i10t/v2/column-total", "cluster": "other", "subdomain": "sports", "tier": "near-term", "status": "grader_error", "score": null, "full_pass": false, "agent_exit_code": 0, "ended_by": "exit", "error": "Traceback (most recent call last):\n  File \"/opt/lastexam/lib/lastexam/grading/harness.py\", line 60, in main\n    result = {\"status\": \"ok\", \"rubric\": run_grader(ctx).to_dict()}\n                                        ^^^^^^^^^^^^^^^\n  File \"/opt/lastexam/lib/lastexam/grading/harness.py\", line 35, in run_grader\n    rubric = grade(ctx)\n             ^^^^^^^^^^\n  File \"/grade/task/grader.py\", line 2, in grade\n    raise ValueError(''grader is broken'')\nValueError: grader is broken\n", "started_at": "2026-12-03T07:51:03.719+00:00", "finished_at": "2026-12-03T07:51:03.880+00:00", "timings": {"stage": 0.0019, "agent": 0.0564, "collect": 0.0079, "grade": 0.0931, "record": 0.0058}, "outputs": {"files": 1, "bytes": 32, "dropped": [], "dropped_count": 0}, "missing_outputs": [], "usage": {"traced": true, "execs": 2, "script_execs": 1, "programs": {"bash": 1, "mawk": 1}, "python_imports": {}, "declared_software": {"awk": true}, "used_declared": true, "script_share": 0.5}, "policy": {"kind": "grader_failed", "status": "grader_error", "graded": true, "counts": true, "retries": 0, "earlier": []}, "repro": {"harness_version": "0.1.0", "git_commit": "7c8f67a9ce6238acd846c563ae0715a3e1add2d6", "sandbox": {"provider": "bwrap", "bwrap": "bubblewrap 0.8.0", "host_uid": 65534, "limits": "cgroup v1", "network": "none (loopback only)"}, "host": {"cpus": 2, "memory_bytes": 25276071936, "kernel": "6.18.44-fc-v1147", "machine": "x86_64", "python": "3.11.2"}, "task_hash": "85f75d158e4eacb071e62f628b8410e50f2504447070c258795399b6ecc52687", "grader_version": "552d72be53457fa26e3146aa10ca74fd5fe0702c2a1338f9bf67962b85643a8e", "environment": "base", "environment_fingerprint": {"python3": "Python 3.11.2", "python-packages-digest": "7d4d096fa9d6d5b8"}, "agent": "oracle", "agent_version": "lastexam-0.1.0", "model": "", "timeout_s": 60}, "gateway": null}');
CREATE INDEX grades_by_trial ON grades (trial_id, grade_id);
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('grades',2);
COMMIT;
