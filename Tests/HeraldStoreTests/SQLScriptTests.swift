import HeraldStore
import Testing

@Suite struct SQLScriptTests {
    @Test func splitsOnTopLevelSemicolons() {
        #expect(SQLScript.statements("CREATE TABLE a (x int);\nCREATE TABLE b (y int);") == ["CREATE TABLE a (x int)", "CREATE TABLE b (y int)"])
    }

    @Test func semicolonsInQuotesCommentsAndDollarBodiesDoNotSplit() {
        let script = """
            -- a comment; with a semicolon
            INSERT INTO t VALUES ('a;b', 'it''s;');
            /* block; /* nested; */ still comment */
            CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql;
            SELECT "odd;name" FROM t;
            """
        let statements = SQLScript.statements(script)
        #expect(statements.count == 3)
        #expect(statements[0] == "INSERT INTO t VALUES ('a;b', 'it''s;')")
        #expect(statements[1].hasSuffix("$body$ SELECT 1; $body$ LANGUAGE sql"))
        #expect(statements[2] == "SELECT \"odd;name\" FROM t")
    }

    @Test func commentOnlyFragmentsAreDropped() {
        #expect(SQLScript.statements("-- nothing here\n;\n  ;") == [])
    }

    @Test func theEmbeddedMigrationsSplitIntoStatements() {
        for migration in Migration.embedded {
            #expect(!SQLScript.statements(migration.sql).isEmpty)
        }
    }
}
