"""How long a test waits for a served model to load: seconds alone, but over 300 s on a
machine short of memory beside another run of the suite. Only a server that never loads
should fail a test."""

SERVER_START_S = 900
