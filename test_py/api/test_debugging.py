"""The debugging aids, each in a process of its own (they are read from the environment
at the start): source lines in the IR and the StableHLO, saved graphs, the metrics file
at exit, and PT_XLA_DEBUG_LEVEL's compilation causes and exit report."""

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent('''
    import torch, torch_xla
    import torch_xla.core.xla_model as xm

    def scaled(x):
      return x * 2.0  # line 6

    for n in (3, 4):
      y = scaled(torch.arange(n, device='xla').float())
      if n == 4:
        print(torch_xla._XLAC._get_xla_tensors_text([y + 1]))  # line 11
        print(torch_xla._get_stablehlo([y + 1]))
      xm.mark_step()  # line 13
    print(torch.nonzero(y).cpu().flatten().tolist())  # line 14
''')


def run(tmp_path, source=SCRIPT, **env):
  script = tmp_path / 'user_script.py'
  script.write_text(source)
  environ = {k: v for k, v in os.environ.items()
             if k not in ('XLA_IR_DEBUG', 'XLA_HLO_DEBUG', 'PT_XLA_DEBUG', 'PT_XLA_DEBUG_LEVEL')}
  environ['XLA_PERSISTENT_CACHE_PATH'] = '0'  # every graph compiles, as the metrics show
  environ.update({k: str(v) for k, v in env.items()})
  done = subprocess.run([sys.executable, str(script)], env=environ, capture_output=True, text=True, timeout=120)
  assert done.returncode == 0, done.stderr[-3000:]
  return done, str(script)


def test_without_debugging_nodes_have_no_source_lines(tmp_path):
  done, script = run(tmp_path)
  assert script not in done.stdout and 'loc(' not in done.stdout and done.stderr == ''


def test_ir_debug_puts_the_source_line_of_each_op_in_the_ir(tmp_path):
  done, script = run(tmp_path, XLA_IR_DEBUG=1)
  assert f'stablehlo.multiply(' in done.stdout
  assert f'# {script}:6 (scaled)' in done.stdout  # the multiply
  assert f'# {script}:11 (<module>)' in done.stdout  # the + 1
  assert 'loc(' not in done.stdout  # StableHLO locations are XLA_HLO_DEBUG's


def test_hlo_debug_puts_source_lines_in_the_stablehlo(tmp_path):
  done, script = run(tmp_path, XLA_HLO_DEBUG=1)
  assert f'"stablehlo.multiply"' in done.stdout
  assert f'loc("scaled"("{script}":6:1))' in done.stdout


def test_saved_graphs_in_each_format_name_the_sync_line(tmp_path):
  for fmt, mark in (('text', 'stablehlo.multiply('), ('stablehlo', '"stablehlo.multiply"'), ('dot', 'digraph G {')):
    saved = tmp_path / f'graphs_{fmt}.txt'
    _, script = run(tmp_path, XLA_SAVE_TENSORS_FILE=saved, XLA_SAVE_TENSORS_FMT=fmt)
    text = saved.read_text()
    # The two mark_steps and the nonzero's read of y (a graph of data only).
    assert text.count('[ScheduleSyncTensorsGraph]') >= 2, text
    assert f'  {script}:13 (<module>)' in text and f'Format: {fmt}' in text
    assert mark in text and text.count('## BEGIN_GRAPH') == text.count('## END_GRAPH')


def test_the_metrics_file_is_written_at_exit(tmp_path):
  metrics = tmp_path / 'metrics.txt'
  run(tmp_path, XLA_METRICS_FILE=metrics)
  text = metrics.read_text()
  assert 'Metric: CompileTime' in text and 'Counter: aten::nonzero' in text


def test_debug_level_explains_compilations_and_reports_at_exit(tmp_path):
  done, script = run(tmp_path, PT_XLA_DEBUG_LEVEL=1)
  err = done.stderr
  prefix = 'Compilation Analysis: '
  # torch_xla's block: the cause, what changed since the last graph of that line, the
  # graph's counts, the Python frames from the sync outwards.
  assert (f'{prefix}Compilation Cause\n{prefix}  user torch_xla.sync\n'
          f'{prefix}  (the first graph synced at {script}:13 (<module>))\n{prefix}Graph Info: \n') in err
  assert f'{prefix}  (shapes changed since the graph compiled at {script}:13 (<module>): output 0 f32[3] -> f32[4];)' in err
  assert f'{prefix}  Number of Graph Inputs: 1\n{prefix}  Number of Graph Outputs: 1\n' in err  # x * 2.0
  frames = err.split(f'{prefix}Python Frame Triggered Execution: \n', 1)[1].split(f'{prefix}-----', 1)[0]
  assert frames.startswith(f'{prefix}  sync (') and f'{prefix}  <module> ({script}:13)' in frames
  assert 'Post Compilation Analysis: Graph input size: 0.000000 GB' in err
  assert 'Execution Analysis: ' not in err  # level 2
  assert 'pt-xla-debug: report: ' in err and ' compilation(s) (' in err
  assert f'aten::nonzero ran on the CPU fallback 1 time(s), called from {script}:14 (<module>)' in err


def test_pt_xla_debug_turns_on_every_level_and_writes_to_the_debug_file(tmp_path):
  log = tmp_path / 'debug.txt'
  done, script = run(tmp_path, SCRIPT + 'print(torch.randn(2, 2, device="xla") * 3)\n', PT_XLA_DEBUG=1,
                     PT_XLA_DEBUG_FILE=log, PT_XLA_DEBUG_MAX_FRAME=1)
  text = log.read_text()
  compilations, executions = text.count('Compilation Cause'), text.count('Execution Cause')
  assert compilations >= 2 and executions >= compilations, text
  # One frame, then the mark of the ones left out.
  assert 'Execution Analysis: Python Frame Triggered Execution: \nExecution Analysis:   sync (' in text
  assert '\nExecution Analysis:   ..........\nExecution Analysis: -----' in text
  # The print's read of a pending value; the random number state is not counted as an output.
  assert ('Compilation Analysis:   most likely user code trying to access tensor value before torch_xla.sync\n'
          in text)
  read = text.split('most likely user code', 1)[1]
  assert 'Number of Graph Inputs: 2\n' in read and 'Number of Graph Outputs: 1\n' in read  # the state, the 3
  assert 'pt-xla-debug: report: ' in done.stderr and 'Compilation Analysis' not in done.stderr
