"""Other machines, reached over SSH (asyncssh): commands run there with their output streamed
back, files read from there, and a process tied to its channel so that nothing outlives the
link (``ssh.Remote``)."""
