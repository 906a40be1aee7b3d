-- tierwise: server description (used by "test connection"; needs only a login)
SELECT
    CAST(@@VERSION AS nvarchar(4000)) AS version,
    CAST(COALESCE(@@SERVERNAME, SERVERPROPERTY('ServerName')) AS nvarchar(256)) AS server_name
