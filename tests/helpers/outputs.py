"""What a write leaves in a directory: every file with its content, to check that a failed command
or save created or changed nothing, and the temporary files an interrupted atomic write could leave
behind.
"""

from pathlib import Path


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file under `directory` (relative path -> content): to assert a failed run changed nothing."""
    return {
        str(path.relative_to(directory)): path.read_bytes() for path in sorted(directory.rglob("*")) if path.is_file()
    }


def stray_temporary_files(directory: Path) -> list[str]:
    """Files an interrupted atomic write could leave behind."""
    return sorted(path.name for path in directory.iterdir() if path.name.startswith(".tmp"))
