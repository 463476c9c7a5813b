// The `migrate` command-line tool. Its commands arrive with the migrations issue.
print("""
usage: migrate <command>

Versioned SQL migrations for PostgreSQL. Not implemented yet.
""")
