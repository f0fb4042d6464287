"""Command line: python3 -m torch_xla.distributed.fsdp.consolidate_sharded_ckpts
--ckpt_prefix PREFIX [--ckpt_suffix '*.pth'] [--save_path PATH] writes the consolidated
state_dict of the files PREFIX + SUFFIX (one per replica) as {'model': state_dict}."""
from argparse import ArgumentParser

from .state_dict_utils import consolidate_sharded_model_checkpoints


def main(argv=None):
  parser = ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--ckpt_prefix', required=True,
                      help='path prefix of the per-replica checkpoint files')
  parser.add_argument('--ckpt_suffix', default='*.pth',
                      help="pattern after the prefix (default '*.pth')")
  parser.add_argument('--save_path', default='',
                      help="output file (default PREFIX + '_consolidated.pth')")
  args = parser.parse_args(argv)
  _, path = consolidate_sharded_model_checkpoints(args.ckpt_prefix, args.ckpt_suffix, args.save_path)
  print(f'saved the consolidated model to {path}')


if __name__ == '__main__':
  main()
