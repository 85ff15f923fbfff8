// Where the built app lives; the API app serves this folder at `/`.
module.exports = { webDistDir: require('node:path').join(__dirname, 'dist') };
