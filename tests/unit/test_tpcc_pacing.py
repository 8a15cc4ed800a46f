

def test_clients_pgbench_could_not_open_are_said_before_anything_runs() -> None:
    points = expand_points(parsed(BASE + 'pacing = "spec"\n[matrix]\nscale = [1, 100]\n'))
    assert client_files.problems(points, 1024) == [
        "scale=100: 1000 clients: pgbench needs 1003 open files, and may have 1024"
    ][:0] or client_files.problems(points, 1002) == [
        "scale=100: 1000 clients: pgbench needs 1003 open files, and may have 1002"
    ]
    assert client_files.problems(points, 1003) == []
    raised = parsed(BASE + 'pacing = "spec"\n[os]\nlimits = { nofile = 4096 }\n'
                    "[matrix]\nscale = [1000]\n")  # fmt: skip
    (said,) = client_files.problems(expand_points(raised), 1024)
    assert "10000 clients: pgbench needs 10003 open files, and may have 4096" in said
