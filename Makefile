# make lab    install what is missing, then open JupyterLab on the quick-start notebook
# make test   install what is missing, then lint (ruff), type-check (mypy: pyproject's [tool.mypy]) and run the
#             tests (GPU tests skip, with a reason, without a GPU)
# make clean-notebooks   strip the outputs from notebooks/*.ipynb, as the repository stores them
VENV := .venv
PY := $(VENV)/bin/python
LAB_ARGS ?=
PYTEST_ARGS ?=

.PHONY: setup lab test test-gpu course-html clean clean-notebooks distclean

setup:
	VENV=$(VENV) bash scripts/setup.sh

lab: setup
	$(VENV)/bin/cudnn-lab lab $(LAB_ARGS)

test:
	VENV=$(VENV) bash scripts/setup.sh --test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(PY) -m pytest $(PYTEST_ARGS)

# executed HTML copies of the course's notebooks in build/course/ (small sizes and recordings without a GPU)
course-html:
	VENV=$(VENV) bash scripts/setup.sh --test
	$(PY) scripts/build_course_html.py

test-gpu: setup
	$(PY) -m pytest -m gpu $(PYTEST_ARGS)

# caches and build outputs; `make distclean` also removes the virtual environment
clean:
	rm -rf build dist .pytest_cache .hypothesis *.egg-info notebooks/lab_output lab_output
	find . -path ./$(VENV) -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +

clean-notebooks: setup
	$(PY) scripts/strip_notebooks.py

distclean: clean
	rm -rf $(VENV)
