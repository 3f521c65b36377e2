package llmtest

import "github.com/teammem/teammem/internal/llm"

// ConsolidationBefore is the small memory store of the scripted
// consolidation (issue 24): two duplicate memories (deploy, deploying), a
// fact a later memory contradicts (db, migration) and an index naming all.
// Keys are entry keys, without a leading slash.
var ConsolidationBefore = map[string]string{
	"MEMORY.md":         "- [Deploy](team/deploy.md) — how to deploy\n- [Deploying](team/deploying.md) — deploying\n- [Database](team/db.md) — the database\n- [Migration](team/migration.md) — the migration\n",
	"team/deploy.md":    "Deploy with `make deploy` from main.\n",
	"team/deploying.md": "To deploy, run make deploy (only from the main branch).\n",
	"team/db.md":        "The database is MySQL 5.7.\n",
	"team/migration.md": "In March we moved the database from MySQL to Postgres 15.\n",
}

// ConsolidationAfter is what ConsolidationScript leaves of
// ConsolidationBefore: the duplicates merged, the fact corrected, the
// index rewritten.
var ConsolidationAfter = map[string]string{
	"MEMORY.md":         "- [Deploy](team/deploy.md) — `make deploy`, from main only\n- [Database](team/db.md) — Postgres 15 since March\n- [Migration](team/migration.md) — MySQL to Postgres, March\n",
	"team/deploy.md":    "Deploy with `make deploy`, only from the main branch.\n",
	"team/db.md":        "The database is Postgres 15 (moved from MySQL 5.7 in March).\n",
	"team/migration.md": ConsolidationBefore["team/migration.md"],
}

// ConsolidationScript is the model's side of the scripted consolidation
// with the memory tools of a consolidate.TreeToolbox: seven turns (list,
// read, write, delete, write, write, a final text), each reporting usage.
func ConsolidationScript(usage llm.Usage) []Reply {
	replies := []Reply{
		ToolUse("t1", "list", map[string]string{"path": "/"}),
		ToolUse("t2", "read", map[string]string{"path": "/team/deploying.md"}),
		ToolUse("t3", "write", map[string]string{"path": "/team/deploy.md", "content": ConsolidationAfter["team/deploy.md"]}),
		ToolUse("t4", "delete", map[string]string{"path": "/team/deploying.md"}),
		ToolUse("t5", "write", map[string]string{"path": "/team/db.md", "content": ConsolidationAfter["team/db.md"]}),
		ToolUse("t6", "write", map[string]string{"path": "/MEMORY.md", "content": ConsolidationAfter["MEMORY.md"]}),
		Text("Merged the two deploy memories, corrected the database fact, rewrote MEMORY.md."),
	}
	for i := range replies {
		replies[i].Response.Usage = usage
	}
	return replies
}
