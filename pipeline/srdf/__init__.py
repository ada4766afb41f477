"""SRDF: the model, its reader, rules and writer, and running `gen_srdf()` sources."""

from pipeline.srdf.compile import compile_srdf
from pipeline.srdf.model import Srdf
from pipeline.srdf.read import load_srdf, parse_srdf
from pipeline.srdf.view import tesseract_view
from pipeline.srdf.write import write_srdf

__all__ = ["Srdf", "compile_srdf", "load_srdf", "parse_srdf", "tesseract_view", "write_srdf"]
