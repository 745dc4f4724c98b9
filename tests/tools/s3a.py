"""Hadoop's S3A connector for a Spark's JVM, and its settings for moto's S3 server: what a JVM
needs to read and write ``s3a://`` (Apache Hudi's oracle on PySpark 3.5, Spark's own parquet
reader under ``hudi_spark.read`` on PySpark 4)."""

from __future__ import annotations

from pathlib import Path

from maven import ensure_jars

#: hadoop-aws of the Hadoop each of our PySparks ships (3.5.1: 3.3.4; 4.3: 3.5.0), with the AWS
#: SDK jars its pom names for run time (each fetched alone: Maven's client cannot resolve 3.5.0's
#: test dependencies)
CONNECTORS = {
    "3.3.4": ("org.apache.hadoop:hadoop-aws:3.3.4", "com.amazonaws:aws-java-sdk-bundle:1.12.262"),
    "3.5.0": (
        "org.apache.hadoop:hadoop-aws:3.5.0",
        "software.amazon.awssdk:bundle:2.35.4",
        "software.amazon.s3.analyticsaccelerator:analyticsaccelerator-s3:1.3.1",
    ),
}


def hadoop_version(pyspark_jars: Path) -> str:
    """The Hadoop a PySpark ships, from its ``jars/`` folder (``hadoop-client-api-X.jar``)."""
    (api,) = pyspark_jars.glob("hadoop-client-api-*.jar")
    return api.stem.removeprefix("hadoop-client-api-")


def s3a_jars(hadoop: str) -> tuple[Path, ...]:
    """The S3A connector of Hadoop ``hadoop`` and the SDK it needs, fetched if missing."""
    return ensure_jars(*CONNECTORS[hadoop])


def s3a_settings(endpoint_url: str) -> dict[str, str]:
    """The Hadoop settings of the S3A connector for an S3 server at ``endpoint_url`` that takes
    any key (moto's, on loopback: plain HTTP, path-style addresses; the region named, so the SDK
    asks no instance metadata service)."""
    return {
        "fs.s3a.endpoint": endpoint_url,
        "fs.s3a.endpoint.region": "us-east-1",
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        "fs.s3a.access.key": "testing",
        "fs.s3a.secret.key": "testing",
    }


def s3a_session_conf(endpoint_url: str) -> dict[str, str]:
    """A SparkSession's settings that give this interpreter's PySpark the S3A connector of its
    Hadoop (fetched if missing), pointed at the S3 server at ``endpoint_url``."""
    import pyspark

    jars = s3a_jars(hadoop_version(Path(pyspark.__file__).parent / "jars"))
    return {
        "spark.jars": ",".join(str(j) for j in jars),
        **{f"spark.hadoop.{k}": v for k, v in s3a_settings(endpoint_url).items()},
    }
