"""Command-line conventions: every subcommand describes itself, vsearch's --id, `-` for
standard input and output where streams make sense, and one error line otherwise."""
import io

import pytest

from seqpairs.cli import build_parser, main
from seqpairs.stages import COMMANDS, STAGES

FASTA = ">a;size=3\nACGTACGTAACGT\n>b;size=2\nACGAACGTAACGT\n>c\nTTGAACGTAACGA\n"


@pytest.fixture
def fasta(tmp_path):
    path = tmp_path / "u.fasta"
    path.write_text(FASTA)
    return path


def test_every_subcommand_has_a_description():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    assert set(STAGES) <= set(commands)
    for name, command in commands.items():
        assert command.description and command.description[0].isupper(), name
        assert " ".join(command.description.split()) in " ".join(command.format_help().split())


def subcommands(parser) -> set[str]:
    return set(parser._subparsers._group_actions[0].choices)


def test_a_command_registers_its_own_stage_only(capsys):
    """COMMANDS names every subcommand's module; a command line registers that module's
    subcommands alone; help and a wrong command see every one."""
    assert subcommands(build_parser()) == set(COMMANDS)
    for name, module in COMMANDS.items():
        own = subcommands(build_parser(["-q", name, "--x"]))
        assert name in own and own == {c for c, m in COMMANDS.items() if m == module}
    assert main(["filtre", "-i", "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and all(name in err for name in STAGES), err


@pytest.mark.parametrize("command", ["filter", "cluster"])
def test_id_is_identity(command, fasta, tmp_path, cli):
    outputs = []
    for flag, prefix in (("--identity", "long"), ("--id", "short")):
        out = tmp_path / prefix
        if command == "filter":
            argv = ["filter", "-i", fasta, flag, "0.8", "-o", out]
        else:
            pairs = tmp_path / "kept.tsv"
            assert cli("filter", "-i", fasta, "--identity", "0.8", "-o", pairs)[0] == 0
            argv = ["cluster", "--linkage", "greedy", flag, "0.85", "--pairs", pairs,
                    "--fasta", fasta, "-o", out]
        code, _, err = cli(*argv)
        assert code == 0, err
        outputs.append(sorted(p.read_bytes() for p in tmp_path.glob(f"{out.name}*")))
    assert outputs[0] == outputs[1] and outputs[0]


def test_text_outputs_to_standard_output(fasta, tmp_path, cli):
    for argv, name in ((["filter", "-i", fasta, "--id", "0.8"], "kept.tsv"),
                       (["distance", "-i", fasta, "--format", "seqdist"], "d.txt"),
                       (["distance", "-i", fasta, "--max-distance", "9", "--format", "mothur"],
                        "d.dist")):
        code, _, err = cli(*argv, "-o", tmp_path / name)
        assert code == 0, err
        code, out, err = cli(*argv, "-o", "-")
        assert code == 0, err
        assert out == (tmp_path / name).read_text() and out
    assert not list(tmp_path.glob("-"))  # no file named "-"


def test_fasta_from_standard_input(fasta, tmp_path, cli, monkeypatch):
    code, _, err = cli("distance", "-i", fasta, "--format", "seqdist", "-o", tmp_path / "file.txt")
    assert code == 0, err
    monkeypatch.setattr("sys.stdin", io.StringIO(FASTA))
    code, _, err = cli("distance", "-i", "-", "--format", "seqdist", "-o", tmp_path / "stdin.txt")
    assert code == 0, err
    assert (tmp_path / "stdin.txt").read_text() == (tmp_path / "file.txt").read_text()


@pytest.mark.parametrize("argv", [["distance", "--edges", "-"], ["distance", "--condensed", "-"],
                                  ["distance", "--format", "edges", "-o", "-"],
                                  ["cluster", "--linkage", "greedy", "--pairs", "x", "-o", "-"]])
def test_binary_and_several_file_outputs_refuse_standard_output(argv, fasta, cli):
    code, out, err = cli(*argv[:1], "-i", fasta, *argv[1:])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "standard output takes text outputs only" in err
