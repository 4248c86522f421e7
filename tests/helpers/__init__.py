"""What the tests share besides fixtures: independent statements of what the code under test must
do (reference trainers, readers of the shared data, published constants, peers set up from first
principles) and running the installed `bpe` command.

Imported as `helpers.<module>`: pytest puts tests/ (which has no __init__.py) first on sys.path to
import conftest.py and the test modules (the default "prepend" import mode), so this package is
found there. Nothing here is a test, and nothing here takes its expected values from bpe_core.
Fixtures stay in tests/conftest.py.
"""
