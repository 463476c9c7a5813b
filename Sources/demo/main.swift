// The address-book demo. Its commands arrive with the demo issue.
print("""
usage: demo <command>

An address book whose `watch` view follows edits made in other terminals. Not implemented yet.
""")
