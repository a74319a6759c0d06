"""Offline stand-in for the get-pip bootstrap script ansible-test downloads from its CI host.

ansible-test creates an empty virtual environment per sanity test and runs
`python get_pip.py [pip install options] pip==X ... [--no-setuptools] [--no-wheel]` in it. That host is
not reachable here, so this script bootstraps the pip bundled with Python (ensurepip) and then lets
that pip install the requested packages from the package index, which is.
"""

import subprocess
import sys

GET_PIP_ONLY_OPTIONS = {"--no-setuptools", "--no-wheel"}

# In a child process: ensurepip sets PIP_CONFIG_FILE=/dev/null in its own environment, which would
# hide the machine's pip configuration (index, CA bundle) from the install below.
subprocess.check_call([sys.executable, "-m", "ensurepip", "--upgrade"])
args = [arg for arg in sys.argv[1:] if arg not in GET_PIP_ONLY_OPTIONS]
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install", "--upgrade", *args]))
