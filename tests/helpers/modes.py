"""Which engine this test run uses: with BPE_CORE_PURE=1 the installed engine runs its Python
sources, several times slower, so a test that runs in both modes may make the same claim on a
smaller slice of the data when PURE is true. Said once here; the environment variable itself is
documented in the README.
"""

import os

PURE = os.environ.get("BPE_CORE_PURE") == "1"
