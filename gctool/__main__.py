from gctool.cli.main import run

run()
