from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_starts_with_the_two_commands_and_ci_runs_the_second():
    lines = (ROOT / "README.md").read_text().splitlines()
    fence = lines.index("```bash")
    install_and_demo, install_and_test = lines[fence + 1], lines[fence + 2]
    assert lines[fence + 3] == "```"
    assert install_and_demo.endswith("smartboost demo")
    assert install_and_test in (ROOT / ".ci" / "run").read_text().splitlines()
