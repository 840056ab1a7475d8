"""hosts/: the agent hosts that load a memory index, and their guards.

Index caps and the guard's verdict, the memory-store doctor, and the wiring
of the skill, rules and hooks into a host.

May import read/, write/, schema/, memory/ and graph/.
"""
