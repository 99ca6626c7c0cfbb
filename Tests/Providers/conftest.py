"""pytest setup for the provider stand-ins: their modules import each other by name."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
