"""How long a test waits on a command before it calls it hung (a module of its own: test files
import it by a name no other file in tests/ has). A guard against a hang, never a deadline: a
machine running a second suite beside this one took over 600 s for what takes 30 s alone."""

HANG_S = 3600
