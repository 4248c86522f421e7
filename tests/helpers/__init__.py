"""What the tests share besides fixtures: independent statements of what the code under test must
do and the means to run it, one module per concern, each defined once:

- paths: where the project and the shared data are; modes: whether this run is pure;
- text, dna, midi: each domain's shared data, read independently, and its facts and configs;
- patterns: the published split patterns; reference, reference_hf: the naive trainers and
  encoder to check the engine against, and Hugging Face's trainer mirrored;
- interop: the peers (tiktoken, Hugging Face) set up from first principles;
- strategies: hypothesis strategies more than one module draws from;
- cli_runner: running the installed `bpe` command and checking its outcome; outputs: what a
  write leaves in a directory; processes: the worker processes a test started; browser:
  headless Chromium for the inspect pages.

Imported as `helpers.<module>`: pytest puts tests/ (which has no __init__.py) first on sys.path to
import conftest.py and the test modules (the default "prepend" import mode), so this package is
found there. Nothing here is a test, and nothing here takes its expected values from bpe_core.
Fixtures shared by more than one module are defined once, in tests/conftest.py.
"""
